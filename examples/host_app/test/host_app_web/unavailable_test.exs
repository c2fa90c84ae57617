defmodule HostAppWeb.UnavailableTest do
  # The statuses a reader gets when PostgreSQL is away (the database-down run
  # of scripts/faults/run.sh watches the real thing).
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
