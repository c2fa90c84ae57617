# A stream of POSTs of new attempts from 8 connections, for the crash run of
# faults/run.sh: it goes on through every kill -9 and restart of the
# release (a refused or cut connection is retried after 50 ms) until the
# --stop file exists. The id of every attempt answered 201 is appended to the
# --acked file at once, so that what the host acknowledged before a kill can
# be looked for in the database afterwards.
#
#   MIX_ENV=test mix run --no-start examples/drills/faults/posts.exs -- --port P --acked FILE --stop FILE
Code.require_file("http.exs", __DIR__)

{opts, _, _} =
  OptionParser.parse(System.argv(), strict: [port: :integer, acked: :string, stop: :string])

port = Keyword.fetch!(opts, :port)
stop = Keyword.fetch!(opts, :stop)
{:ok, acked} = File.open(Keyword.fetch!(opts, :acked), [:append])

writer =
  spawn_link(fn ->
    Stream.repeatedly(fn -> receive(do: (id -> IO.write(acked, [id, "\n"]))) end) |> Stream.run()
  end)

post = fn post, socket, n ->
  cond do
    File.exists?(stop) ->
      n

    socket == nil ->
      case Faults.HTTP.connect(port) do
        {:ok, socket} -> post.(post, socket, n)
        {:error, _} -> Process.sleep(50) && post.(post, nil, n)
      end

    true ->
      # Those who may request work: a member, an operator.
      handle = Enum.random(~w(member operator))
      body = ~s({"issue_number": 1, "target_kind": "#{Enum.random(~w(box computer))}"})

      case Faults.HTTP.request(
             socket,
             "POST",
             "/api/repositories/acme-widgets/attempts",
             handle,
             body
           ) do
        {:ok, 201, _, raw} ->
          send(writer, get_in(Jason.decode!(raw), ["data", "attempt", "id"]))
          post.(post, socket, n + 1)

        {:ok, status, _, raw} ->
          # 503 while the VM starts and its pool connects is allowed; 500 never.
          if status >= 500 and status != 503, do: raise("POST answered #{status}: #{raw}")
          post.(post, socket, n)

        {:error, _} ->
          :gen_tcp.close(socket)
          Process.sleep(50)
          post.(post, nil, n)
      end
  end
end

total =
  1..8
  |> Enum.map(fn _ -> Task.async(fn -> post.(post, nil, 0) end) end)
  |> Task.await_many(:infinity)
  |> Enum.sum()

# Let the writer drain, then close the file.
Process.sleep(200)
File.close(acked)
IO.puts("posts: #{total} attempts acknowledged")
