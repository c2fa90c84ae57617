Code.require_file("../faults/http.exs", __DIR__)

defmodule LoadSupport do
  @moduledoc """
  What a load driver needs (rolling_replace_load.exs): the five
  readers, their attempts page on a fresh connection (as a load balancer's
  would be), the clients' loop from DIR/ready to DIR/stop, the script's time
  marks (epoch microseconds, `date +%s%6N`) and the one-line checks.
  """

  @readers [nil, "stranger", "member", "owner", "operator"]

  @doc "The five readers (bearer handles; nil is the anonymous reader)."
  def readers, do: @readers

  @doc "`--dir DIR [--clients N]` (10 by default) and `{name, type}`: `{its value, dir, clients}`."
  def options(argv, {name, type}) do
    {opts, _, _} =
      OptionParser.parse(argv, strict: [{name, type}, dir: :string, clients: :integer])

    {Keyword.fetch!(opts, name), Keyword.fetch!(opts, :dir), Keyword.get(opts, :clients, 10)}
  end

  @doc "The attempts page as `reader` from 127.0.0.1:`port`: `{:ok, status, headers, body}` or `{:error, reason}`."
  def get(port, reader) do
    with {:ok, socket} <- Faults.HTTP.connect(port) do
      reply =
        Faults.HTTP.request(socket, "GET", "/api/repositories/acme-widgets/attempts", reader)

      :gen_tcp.close(socket)
      reply
    end
  end

  @doc """
  Runs `clients` processes, client `i` reading as reader `i` (round robin),
  each calling `request.(reader)` again and again from DIR/ready until DIR/stop
  exists; returns every call as `{reader, t0, t1, result}` (its start and end).
  """
  def run(dir, clients, request) do
    parent = self()

    tasks =
      for i <- 0..(clients - 1) do
        reader = Enum.at(@readers, rem(i, length(@readers)))
        spawn_link(fn -> send(parent, {:done, self(), client(reader, request, [])}) end)
      end

    File.write!(Path.join(dir, "ready"), "")
    wait_for(Path.join(dir, "stop"))
    Enum.each(tasks, &send(&1, :stop))
    Enum.flat_map(tasks, fn pid -> receive do: ({:done, ^pid, list} -> list) end)
  end

  defp client(reader, request, acc) do
    receive do
      :stop -> acc
    after
      0 ->
        t0 = System.os_time(:microsecond)
        result = request.(reader)
        client(reader, request, [{reader, t0, System.os_time(:microsecond), result} | acc])
    end
  end

  defp wait_for(file), do: File.exists?(file) || (Process.sleep(20) && wait_for(file))

  @doc "The time the script wrote in DIR/`name`, or nil."
  def mark(dir, name) do
    with {:ok, text} <- File.read(Path.join(dir, name)),
         do: String.to_integer(String.trim(text)),
         else: (_ -> nil)
  end

  @doc "Prints a check's line (`ok` or `FAIL`) and answers whether it passed."
  def check(ok?, line), do: IO.puts("#{if ok?, do: "ok  ", else: "FAIL"} #{line}") && ok?

  @doc "Prints a failed check's line and exits 1."
  def fail(message), do: IO.puts("FAIL #{message}") && System.halt(1)

  @doc "Exits 0 when every check passed, 1 otherwise."
  def halt(results), do: System.halt(if Enum.all?(results), do: 0, else: 1)
end
