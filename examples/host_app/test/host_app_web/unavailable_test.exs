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

  test "an ArgumentError raised inside DBConnection.Holder is a 503" do
    stack = [{:ets, :update_element, 3, []}, {DBConnection.Holder, :checkout_call, 5, []}]
    error = assert_raise WrapperError, fn -> call(wrapped(%ArgumentError{}, stack)) end
    assert Plug.Exception.status(error.reason) == 503
  end

  test "an ArgumentError raised inside Ecto.Repo.Registry (a repo restarting) is a 503" do
    stack = [{:ets, :lookup_element, 3, []}, {Ecto.Repo.Registry, :lookup, 1, []}]
    error = assert_raise WrapperError, fn -> call(wrapped(%ArgumentError{}, stack)) end
    assert %DBConnection.ConnectionError{} = error.reason
    assert Plug.Exception.status(error.reason) == 503
  end

  test "any other error or exit passes through unchanged" do
    stack = [{HostApp.Attempts, :list, 2, []}]
    error = assert_raise WrapperError, fn -> call(wrapped(%ArgumentError{}, stack)) end
    assert %ArgumentError{} = error.reason
    assert catch_exit(call(fn -> exit(:other) end)) == :other
  end
end
