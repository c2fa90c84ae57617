defmodule HostAppWeb.UpgradeGateTest do
  @moduledoc """
  HostApp.Upgrade's gate: what release_handler does to a request during an
  install (every application's environment deleted, then put back), and the
  gate that keeps requests out while it does. Not async: the tests take
  `:elixir`'s environment away from the whole VM, and close the one gate.
  scripts/hot_upgrade.sh runs the real install behind it, under load.
  """
  use HostAppWeb.ConnCase, async: false

  alias HostApp.Upgrade

  setup :seeded

  @path "/api/repositories/acme-widgets/attempts"

  # :elixir's environment deleted as application_controller's
  # change_application_data/2 deletes it (before it inserts the new one),
  # and put back when the test ends, whatever happens.
  defp without_elixir_env do
    saved = :ets.match_object(:ac_tab, {{:env, :elixir, :_}, :_})
    on_exit(fn -> :ets.insert(:ac_tab, saved) end)
    :ets.match_delete(:ac_tab, {{:env, :elixir, :_}, :_})
    fn -> :ets.insert(:ac_tab, saved) end
  end

  defp attempts_page(ctx), do: request_as(ctx.readers.member, :get, @path)

  # Until `held` requests wait at the door: a point to synchronise on, not
  # a time.
  defp await_held(held) do
    unless Upgrade.state().held == held do
      Process.sleep(1)
      await_held(held)
    end
  end

  # A request inside the gate until it is sent :leave.
  defp request_inside do
    parent = self()

    request =
      Task.async(fn ->
        Upgrade.serve(fn ->
          send(parent, :inside)
          receive do: (:leave -> :served)
        end)
      end)

    assert_receive :inside
    request
  end

  # {fun's result, how many times this process called the NIF
  # OpenAgentsPolicy.Native.decision_digest/0 while it ran}.
  defp digest_calls(fun) do
    nif = {OpenAgentsPolicy.Native, :decision_digest, 0}
    parent = self()
    tracer = spawn_link(fn -> count_calls(parent, 0) end)
    1 = :erlang.trace_pattern(nif, true, [:global])
    1 = :erlang.trace(self(), true, [:call, {:tracer, tracer}])

    result =
      try do
        fun.()
      after
        :erlang.trace(self(), false, [:call])
        :erlang.trace_pattern(nif, false, [:global])
      end

    ref = :erlang.trace_delivered(self())
    assert_receive {:trace_delivered, _, ^ref}
    send(tracer, :count)
    assert_receive {:calls, calls}
    {result, calls}
  end

  defp count_calls(parent, calls) do
    receive do
      {:trace, _pid, :call, _mfa} -> count_calls(parent, calls + 1)
      :count -> send(parent, {:calls, calls})
    end
  end

  test "a request that reads an attempt while :elixir's environment is gone answers 500", ctx do
    without_elixir_env()

    {500, _headers, body} = assert_error_sent(500, fn -> attempts_page(ctx) end)
    assert body =~ "Internal Server Error"
  end

  test "an install holding the gate: a request waits, and is answered once it opens", ctx do
    expected = attempts_page(ctx) |> json!(200)

    assert {:ok, task} =
             Upgrade.closed(fn ->
               restore = without_elixir_env()
               task = Task.async(fn -> attempts_page(ctx) end)
               await_held(1)
               assert Task.yield(task, 0) == nil
               assert %{closed: true, inside: 0, held: 1} = Upgrade.state()
               restore.()
               task
             end)

    assert task |> Task.await() |> json!(200) == expected
    assert Upgrade.state() == %{closed: false, inside: 0, held: 0}
  end

  test "an install waits for the requests inside to leave" do
    request = request_inside()
    install = Task.async(fn -> Upgrade.closed(fn -> :installed end) end)
    assert Task.yield(install, 0) == nil
    send(request.pid, :leave)
    assert Task.await(request) == :served
    assert Task.await(install) == {:ok, :installed}
  end

  test "requests still inside when the drain ends: nothing installed, the door open again" do
    request = request_inside()

    assert Upgrade.closed(fn -> flunk("installed with a request inside") end, 0) ==
             {:error, {:requests_still_running, 1}}

    assert %{closed: false, inside: 1} = Upgrade.state()
    send(request.pid, :leave)
    assert Task.await(request) == :served
  end

  test "a second install while one holds the door is refused" do
    assert Upgrade.closed(fn -> Upgrade.closed(fn -> flunk("ran twice") end) end) ==
             {:ok, {:error, :install_in_progress}}

    assert Upgrade.state().closed == false
  end

  describe "serve_conn/2: inside while the answer is decided" do
    test "a request leaves as its response is sent, once, and only its own level" do
      Upgrade.serve(fn ->
        sent =
          Upgrade.serve_conn(build_conn(), fn conn ->
            assert Upgrade.state().inside == 2
            conn = Plug.Conn.send_resp(conn, 200, "ok")
            assert Upgrade.state().inside == 1
            conn
          end)

        assert sent.state == :sent
        # The `after` found it gone: the outer level is still inside.
        assert Upgrade.state().inside == 1
      end)

      assert Upgrade.state().inside == 0
    end

    test "one that sends nothing, or raises, leaves as it ends; a response sent after leaves nothing more" do
      Upgrade.serve(fn ->
        unsent = Upgrade.serve_conn(build_conn(), & &1)
        assert Upgrade.state().inside == 1
        # Its callback still runs when it is sent outside, and finds it out.
        Plug.Conn.send_resp(unsent, 200, "late")
        assert Upgrade.state().inside == 1

        # As Phoenix renders a raised request's 500: with the conn that
        # carries the callback, after serve_conn's `after`.
        raised =
          try do
            Upgrade.serve_conn(build_conn(), fn conn ->
              raise Plug.Conn.WrapperError, conn: conn, kind: :error, reason: :boom, stack: []
            end)
          rescue
            e in Plug.Conn.WrapperError -> e.conn
          end

        assert Upgrade.state().inside == 1
        Plug.Conn.send_resp(raised, 500, "")
        assert Upgrade.state().inside == 1

        # Raised after its response was sent.
        assert_raise RuntimeError, "after the response", fn ->
          Upgrade.serve_conn(build_conn(), fn conn ->
            Plug.Conn.send_resp(conn, 200, "ok")
            raise "after the response"
          end)
        end

        assert Upgrade.state().inside == 1
      end)

      assert Upgrade.state() == %{closed: false, inside: 0, held: 0}
    end
  end

  describe "x-served-by-node and x-policy-digest" do
    test "sent only when turned on, naming the node and the version that decided", ctx do
      previous = Upgrade.put_served_by_headers(false)
      on_exit(fn -> Upgrade.put_served_by_headers(previous) end)
      conn = attempts_page(ctx)
      assert conn.status == 200
      assert Plug.Conn.get_resp_header(conn, "x-served-by-node") == []
      assert Plug.Conn.get_resp_header(conn, "x-policy-digest") == []

      assert Upgrade.put_served_by_headers(true) == false
      conn = attempts_page(ctx)
      assert Plug.Conn.get_resp_header(conn, "x-served-by-node") == [Atom.to_string(node())]

      assert Plug.Conn.get_resp_header(conn, "x-policy-digest") == [
               OpenAgentsPolicy.decision_digest()
             ]
    end

    test "the digest is the one kept at start and after each install: no NIF call per request",
         ctx do
      previous = Upgrade.put_served_by_headers(true)
      on_exit(fn -> Upgrade.put_served_by_headers(previous) end)
      on_exit(fn -> Upgrade.refresh_digest() end)
      digest = OpenAgentsPolicy.decision_digest()

      {conn, calls} = digest_calls(fn -> attempts_page(ctx) end)
      assert Plug.Conn.get_resp_header(conn, "x-policy-digest") == [digest]
      assert calls == 0

      # What the header names is the kept term's, whatever it holds ...
      :persistent_term.put({Upgrade, :decision_digest}, "kept-before-the-install")
      conn = attempts_page(ctx)
      assert Plug.Conn.get_resp_header(conn, "x-policy-digest") == ["kept-before-the-install"]

      # ... until an install ends: the door opens on the loaded version's.
      assert {{:ok, :installed}, 1} = digest_calls(fn -> Upgrade.closed(fn -> :installed end) end)
      assert :persistent_term.get({Upgrade, :decision_digest}) == digest
      assert Plug.Conn.get_resp_header(attempts_page(ctx), "x-policy-digest") == [digest]
    end

    test "HOST_APP_SERVED_BY_HEADERS at boot (config/runtime.exs): 1 or true turns them on" do
      saved = System.get_env("HOST_APP_SERVED_BY_HEADERS")

      on_exit(fn ->
        if saved,
          do: System.put_env("HOST_APP_SERVED_BY_HEADERS", saved),
          else: System.delete_env("HOST_APP_SERVED_BY_HEADERS")
      end)

      read = fn value ->
        if value,
          do: System.put_env("HOST_APP_SERVED_BY_HEADERS", value),
          else: System.delete_env("HOST_APP_SERVED_BY_HEADERS")

        Config.Reader.read!("config/runtime.exs", env: :prod)[:host_app][:served_by_headers]
      end

      assert read.("1") == true
      assert read.("true") == true
      assert read.(nil) == false
      assert read.("0") == false
      assert read.("") == false
    end
  end

  describe "a gate that does not answer an entry: within enter_ms, or at all" do
    setup do
      restore = Upgrade.configure(enter_ms: 200)
      gate = Process.whereis(HostApp.Upgrade.Gate)

      on_exit(fn ->
        if Process.alive?(gate), do: :sys.resume(gate)
        Upgrade.configure(restore)
      end)

      %{gate: gate}
    end

    test "refuses the request with a 503, and the late entry is forgotten", ctx do
      :sys.suspend(ctx.gate)
      started = System.monotonic_time(:millisecond)
      conn = attempts_page(ctx)
      waited = System.monotonic_time(:millisecond) - started
      :sys.resume(ctx.gate)

      assert conn.status == 503
      assert Plug.Conn.get_resp_header(conn, "retry-after") != []
      assert waited >= 200
      assert Upgrade.state() == %{closed: false, inside: 0, held: 0}
      assert Upgrade.closed(fn -> :installed end, 0) == {:ok, :installed}
    end

    test "a request it would have held is refused too, and forgotten as held", ctx do
      assert {:ok, %{closed: true, inside: 0, held: 0}} =
               Upgrade.closed(fn ->
                 :sys.suspend(ctx.gate)
                 refused = Upgrade.serve(fn -> flunk("served unguarded") end)
                 :sys.resume(ctx.gate)
                 assert refused == {:error, :gate_timeout}
                 Upgrade.state()
               end)

      assert Upgrade.state() == %{closed: false, inside: 0, held: 0}
    end

    test "a gate that dies while asked: the one its supervisor starts is asked", ctx do
      Upgrade.configure(enter_ms: 5_000)
      :sys.suspend(ctx.gate)
      parent = self()

      request =
        Task.async(fn -> Upgrade.serve(fn -> send(parent, {:inside, Upgrade.state()}) end) end)

      await_queued(ctx.gate)
      Process.exit(ctx.gate, :kill)

      assert_receive {:inside, %{inside: 1}}
      assert Task.await(request) == {:inside, %{closed: false, inside: 1, held: 0}}
      assert Process.whereis(HostApp.Upgrade.Gate) not in [nil, ctx.gate]
      assert Upgrade.state() == %{closed: false, inside: 0, held: 0}
    end
  end

  # Until `gate` has a message waiting (a call it has not read).
  defp await_queued(gate) do
    if Process.info(gate, :message_queue_len) == {:message_queue_len, 0} do
      Process.sleep(1)
      await_queued(gate)
    end
  end

  test "the door opens again when the install raises" do
    assert_raise RuntimeError, "install failed", fn ->
      Upgrade.closed(fn -> raise "install failed" end)
    end

    assert Upgrade.state() == %{closed: false, inside: 0, held: 0}
  end
end
