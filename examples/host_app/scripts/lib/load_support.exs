Code.require_file("../faults/http.exs", __DIR__)

defmodule LoadSupport do
  @moduledoc """
  What the two upgrade loads share: scripts/hot_upgrade_load.exs (one node)
  and scripts/rolling_upgrade_load.exs (three). Each reads the five readers'
  attempts page over and over on fresh connections while its script upgrades
  the host under it, then judges every answer; this module holds the
  readers and the page, one request, the clients' loop between DIR/ready and
  DIR/stop, the script's time marks and the one-line checks.

  Times are epoch microseconds (`System.os_time(:microsecond)`), the clock
  of the scripts' `date +%s%6N`.
  """

  alias Faults.HTTP

  @readers [nil, "stranger", "member", "owner", "operator"]
  @path "/api/repositories/acme-widgets/attempts"

  @doc "The five readers (bearer handles; nil is the anonymous reader)."
  def readers, do: @readers

  @doc "The page every client reads: one repository's attempts."
  def path, do: @path

  @doc """
  Parses `--dir DIR [--clients N]` (10 by default) and the switch `{name,
  type}` that says where the host is: `{that switch's value, dir, clients}`.
  """
  def options(argv, {name, type}) do
    {opts, _, _} =
      OptionParser.parse(argv, strict: [{name, type}, dir: :string, clients: :integer])

    {Keyword.fetch!(opts, name), Keyword.fetch!(opts, :dir), Keyword.get(opts, :clients, 10)}
  end

  @doc """
  The page as `reader` from the host on `port`, on a connection of its own
  (one kept alive would outlive an install on the server side, and a load
  balancer's would be fresh too): `{:ok, status, headers, body}` or
  `{:error, reason}`.
  """
  def get(port, reader) do
    with {:ok, socket} <- HTTP.connect(port) do
      reply = HTTP.request(socket, "GET", @path, reader)
      :gen_tcp.close(socket)
      reply
    end
  end

  @doc """
  Runs `clients` client processes, client `i` reading as reader `i` (round
  robin over `readers/0`), each calling `request.(reader)` again and again;
  writes DIR/ready once they are all started, stops them once DIR/stop
  exists, and returns every call as `{reader, t0, t1, result}` (when it
  started and ended).
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

  defp wait_for(file) do
    unless File.exists?(file) do
      Process.sleep(20)
      wait_for(file)
    end
  end

  @doc "The time the script wrote in DIR/`name`, or nil when there is none."
  def mark(dir, name) do
    case File.read(Path.join(dir, name)) do
      {:ok, text} -> text |> String.trim() |> String.to_integer()
      {:error, _} -> nil
    end
  end

  @doc "Microseconds as milliseconds, one decimal."
  def ms(us), do: :erlang.float_to_binary(us / 1000, decimals: 1)

  @doc "Prints a check's line (`ok` or `FAIL`) and answers whether it passed."
  def check(ok?, line) do
    IO.puts("#{if ok?, do: "ok  ", else: "FAIL"} #{line}")
    ok?
  end

  @doc "Prints a failed check's line and exits 1."
  def fail(message) do
    IO.puts("FAIL #{message}")
    System.halt(1)
  end

  @doc "Exits 0 when every check passed, 1 otherwise."
  def halt(results), do: if(Enum.all?(results), do: System.halt(0), else: System.halt(1))
end
