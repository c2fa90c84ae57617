defmodule HostAppWeb.UpgradeWedgeTest do
  @moduledoc """
  The security review's four reproductions against HostApp.Upgrade's gate,
  each over real HTTP where the review used it (the endpoint served by
  Bandit on a port of its own, 127.0.0.1): a gate that one request, one
  killed installer or one slow body could wedge. Each failed, run alone, on
  the gate they were written against (two counters in atomics, an `after`
  to leave, a 1 ms poll to wait, the gate around Plug.Parsers): the aborted
  HTTP/2 request and the killed request left `inside` at 1; the killed
  installer left the door closed; the slow body made the install return
  `{:error, {:requests_still_running, 1}}`; the held request ran thousands
  of reductions in 300 ms; the cap, the 503 and `reopen/0` did not exist.
  Not async: they close the one gate.
  """
  use HostAppWeb.ConnCase, async: false

  alias HostApp.Upgrade

  setup :seeded

  @path "/api/repositories/acme-widgets/attempts"

  setup do
    {:ok, server} =
      start_supervised(
        {Bandit, plug: HostAppWeb.Endpoint, ip: {127, 0, 0, 1}, port: 0, startup_log: false}
      )

    {:ok, {_ip, port}} = ThousandIsland.listener_info(server)
    # Whatever a test left closed, open for the next.
    on_exit(fn -> Upgrade.reopen() end)
    %{port: port}
  end

  # `fun` true within `ms`, checked every 10 ms (a point to synchronise on).
  defp eventually(fun, ms \\ 2_000),
    do: wait_until(fun, System.monotonic_time(:millisecond) + ms)

  defp wait_until(fun, deadline) do
    cond do
      fun.() -> true
      System.monotonic_time(:millisecond) >= deadline -> false
      true -> Process.sleep(10) && wait_until(fun, deadline)
    end
  end

  # A process holding the gate closed (inside `closed/2`) until sent :done.
  defp installer do
    parent = self()

    installer =
      spawn(fn ->
        Upgrade.closed(fn ->
          send(parent, :closed)
          receive do: (:done -> :installed)
        end)
      end)

    assert_receive :closed
    installer
  end

  # One HTTP/1.1 request on a fresh connection: {status, headers, body}.
  defp http(port, method, path, reader \\ "member", timeout \\ 10_000) do
    {:ok, socket} = :gen_tcp.connect(~c"127.0.0.1", port, [:binary, active: false])

    :ok =
      :gen_tcp.send(
        socket,
        "#{method} #{path} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer #{reader}\r\n" <>
          "connection: close\r\ncontent-length: 0\r\n\r\n"
      )

    reply = recv_all(socket, "", timeout)
    :gen_tcp.close(socket)
    [head, body] = String.split(reply, "\r\n\r\n", parts: 2)
    ["HTTP/1.1 " <> status | lines] = String.split(head, "\r\n")

    headers =
      for line <- lines, [k, v] = String.split(line, ": ", parts: 2), do: {String.downcase(k), v}

    {status |> String.slice(0, 3) |> String.to_integer(), Map.new(headers), body}
  end

  defp recv_all(socket, acc, timeout) do
    case :gen_tcp.recv(socket, 0, timeout) do
      {:ok, data} -> recv_all(socket, acc <> data, timeout)
      {:error, :closed} -> acc
    end
  end

  defp ms(fun) do
    {us, value} = :timer.tc(fun)
    {div(us, 1000), value}
  end

  describe "HIGH: an aborted request" do
    test "an HTTP/2 request whose client hangs up mid-body leaves nothing inside", %{port: port} do
      # The review's repro: h2c with prior knowledge, a POST whose body never
      # comes, the client gone after 1 s. Bandit kills the stream's process.
      # Newer curls (Debian testing's) can block reading the body from stdin
      # past --max-time, so timeout(1) makes sure the client goes after 5 s.
      {_, status} =
        System.cmd(
          "timeout",
          ~w(-s KILL 5 curl -s -o /dev/null --http2-prior-knowledge --max-time 1 -X POST -T - -H) ++
            ["content-type: application/json", "http://127.0.0.1:#{port}#{@path}"],
          stderr_to_stdout: true,
          into: ""
        )

      # The client hung up: curl's "operation timed out" (28), or killed (137).
      assert status in [28, 137]
      assert eventually(fn -> Upgrade.state().inside == 0 end), inspect(Upgrade.state())
      assert Upgrade.closed(fn -> :installed end, 1_000) == {:ok, :installed}
    end

    test "a request process killed inside the gate leaves it" do
      parent = self()

      request =
        spawn(fn ->
          Upgrade.serve(fn ->
            send(parent, :inside)
            Process.sleep(:infinity)
          end)
        end)

      assert_receive :inside
      assert Upgrade.state().inside == 1
      Process.exit(request, :kill)
      assert eventually(fn -> Upgrade.state().inside == 0 end), inspect(Upgrade.state())
      assert Upgrade.closed(fn -> :installed end, 1_000) == {:ok, :installed}
    end
  end

  describe "MEDIUM: a killed installer" do
    test "the gate reopens when the process holding it dies", %{port: port} do
      installer = installer()
      assert Upgrade.state().closed
      Process.exit(installer, :kill)
      assert eventually(fn -> not Upgrade.state().closed end), inspect(Upgrade.state())
      {took, {status, _, _}} = ms(fn -> http(port, "GET", @path) end)
      assert status == 200
      assert took < 1_500
    end
  end

  describe "MEDIUM: a slow request body" do
    test "a body still arriving holds neither the drain nor other readers", %{port: port} do
      {:ok, slow} = :gen_tcp.connect(~c"127.0.0.1", port, [:binary, active: false])

      :ok =
        :gen_tcp.send(
          slow,
          "POST #{@path} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer member\r\n" <>
            "content-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n1\r\n{\r\n"
        )

      # The body's first byte is in; the rest never comes while the install runs.
      Process.sleep(200)

      install =
        Task.async(fn ->
          ms(fn -> Upgrade.closed(fn -> Process.sleep(100) && :installed end, 2_000) end)
        end)

      {get_took, {status, _, _}} = ms(fn -> http(port, "GET", @path) end)
      {install_took, installed} = Task.await(install, 10_000)
      :gen_tcp.close(slow)

      assert installed == {:ok, :installed}
      assert install_took < 1_500, "the install waited #{install_took} ms for a slow body"
      assert status == 200
      assert get_took < 1_500, "an ordinary GET waited #{get_took} ms"
    end
  end

  describe "LOW: held requests" do
    test "a held request waits on a message, and a killed one leaves the count" do
      installer = installer()
      held = spawn(fn -> Upgrade.serve(fn -> :served end) end)
      assert eventually(fn -> Upgrade.state().held == 1 end)

      # Polling every millisecond costs reductions; a receive costs none.
      {:reductions, before} = Process.info(held, :reductions)
      Process.sleep(300)
      {:reductions, later} = Process.info(held, :reductions)
      assert later - before < 50, "a held request ran #{later - before} reductions in 300 ms"

      Process.exit(held, :kill)
      assert eventually(fn -> Upgrade.state().held == 0 end), inspect(Upgrade.state())
      send(installer, :done)
      assert eventually(fn -> not Upgrade.state().closed end)
    end

    test "past the cap, or past the hold deadline, a request gets 503 with Retry-After",
         %{port: port} do
      restore = Upgrade.configure(max_held: 1, held_ms: 300)
      on_exit(fn -> Upgrade.configure(restore) end)
      installer = installer()
      first = Task.async(fn -> http(port, "GET", @path) end)
      assert eventually(fn -> Upgrade.state().held == 1 end)

      # The cap: one held already.
      assert {503, %{"retry-after" => after_s}, body} = http(port, "GET", @path)
      assert String.to_integer(after_s) >= 1
      assert body =~ "Service Unavailable"

      # The deadline: the held one gives up.
      assert {503, %{"retry-after" => _}, _} = Task.await(first)
      assert Upgrade.state().held == 0
      send(installer, :done)
      assert eventually(fn -> not Upgrade.state().closed end)
      assert {200, _, _} = http(port, "GET", @path)
    end
  end

  test "the gate reopened by hand", %{port: port} do
    installer()
    assert Upgrade.state().closed
    assert Upgrade.reopen() == :reopened
    assert Upgrade.state() == %{closed: false, inside: 0, held: 0}
    assert {200, _, _} = http(port, "GET", @path)
    assert Upgrade.reopen() == :already_open
  end
end
