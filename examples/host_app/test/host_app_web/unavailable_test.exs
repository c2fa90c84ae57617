defmodule HostAppWeb.UnavailableTest do
  # The statuses a reader gets when PostgreSQL is away (the database-down run
  # of examples/drills/faults/run.sh watches the real thing).
  use ExUnit.Case, async: true

  test "no connection to the database is a 503" do
    assert Plug.Exception.status(%DBConnection.ConnectionError{message: "refused"}) == 503
  end

  test "the server shutting down or unreachable is a 503; any other database error a 500" do
    error = fn code -> %Postgrex.Error{postgres: %{code: code, pg_code: pg_code(code)}} end
    assert Plug.Exception.status(error.(:admin_shutdown)) == 503
    assert Plug.Exception.status(error.(:cannot_connect_now)) == 503
    assert Plug.Exception.status(error.(:connection_failure)) == 503
    assert Plug.Exception.status(error.(:unique_violation)) == 500
    assert Plug.Exception.status(error.(:query_canceled)) == 500
    assert Plug.Exception.status(%Postgrex.Error{message: "client-side"}) == 500
  end

  # The repo restarting, as a request sees it through the real endpoint: its
  # name not registered (a RuntimeError), then registered but not yet in
  # Ecto's registry (:ets's raw badarg).
  for {state, repo} <- [{"not started", :"not a repo"}, {"not registered", quote(do: self())}] do
    test "a request while the repo is #{state} is a 503" do
      OpenAgents.Repo.put_dynamic_repo(unquote(repo))
      conn = Plug.Conn.put_req_header(Phoenix.ConnTest.build_conn(), "authorization", "Bearer a")

      request = fn ->
        Phoenix.ConnTest.dispatch(conn, HostAppWeb.Endpoint, :get, "/api/targets")
      end

      assert {503, _headers, _body} = Phoenix.ConnTest.assert_error_sent(503, request)
    end
  end

  # The SQLSTATE of a condition name, from Postgrex's own table.
  defp pg_code(code), do: Postgrex.ErrorCode.name_to_code(code)
end

defmodule HostAppWeb.DatabaseAwayTest do
  # DBConnection's own ways of failing mid-checkout become a
  # DBConnection.ConnectionError (a 503); anything else passes unchanged.
  use ExUnit.Case, async: true

  alias HostAppWeb.DatabaseAway
  alias Plug.Conn.WrapperError

  defmodule Router do
    def init(opts), do: opts

    def call(%{private: %{fail: fail}}, _opts), do: fail.()
  end

  defp call(fail) do
    conn = Plug.Test.conn(:get, "/") |> Plug.Conn.put_private(:fail, fail)
    DatabaseAway.call(conn, DatabaseAway.init(Router))
  end

  defp wrapped(reason, stack) do
    fn ->
      :erlang.raise(:error, %WrapperError{kind: :error, reason: reason, stack: stack}, stack)
    end
  end

  test "an exit from a pool checkout is a 503" do
    error =
      assert_raise WrapperError, fn ->
        call(fn -> exit({:noproc, {DBConnection.Holder, :checkout, [self(), []]}}) end)
      end

    assert %DBConnection.ConnectionError{} = error.reason
    assert Plug.Exception.status(error.reason) == 503
  end

  test "a badarg of :ets inside DBConnection.Holder or a repo's query cache is a 503" do
    for caller <- [
          {DBConnection.Holder, :checkout_call, 5, []},
          {Ecto.Query.Planner, :query_lookup, 6, []}
        ] do
      error =
        assert_raise WrapperError, fn ->
          call(wrapped(:badarg, [{:ets, :lookup, 2, []}, caller]))
        end

      assert Plug.Exception.status(error.reason) == 503
    end
  end

  test "any other error or exit passes through unchanged" do
    stack = [{HostApp.Attempts, :list, 2, []}]
    error = assert_raise WrapperError, fn -> call(wrapped(%ArgumentError{}, stack)) end
    assert %ArgumentError{} = error.reason
    assert catch_exit(call(fn -> exit(:other) end)) == :other
  end
end
