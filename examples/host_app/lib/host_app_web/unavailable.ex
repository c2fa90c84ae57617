# When PostgreSQL is away, a request fails with an exception that says so.
# Phoenix renders a raised exception through HostAppWeb.ErrorJSON with the
# status Plug.Exception gives it, 500 by default; these say 503 instead, so a
# reader gets `{"errors": {"detail": "Service Unavailable"}}` while the
# database is down, and the pool reconnects by itself when it is back.

defimpl Plug.Exception, for: DBConnection.ConnectionError do
  # No connection could be had (refused, dropped from the queue, closed mid-query).
  def status(_error), do: 503
  def actions(_error), do: []
end

defimpl Plug.Exception, for: Postgrex.Error do
  # The server's own word that it is going or gone: a connection exception
  # (class 08) or an operator intervention such as a shutdown (57P01..57P05).
  # Any other database error is a bug here: 500.
  def status(%Postgrex.Error{postgres: %{pg_code: "08" <> _}}), do: 503
  def status(%Postgrex.Error{postgres: %{pg_code: "57P" <> _}}), do: 503
  def status(_error), do: 500
  def actions(_error), do: []
end

defmodule HostAppWeb.Unavailable do
  @moduledoc """
  The answer of a host that cannot answer now but will shortly: 503 with
  `Retry-After: 1` and the usual error body, given by an endpoint not yet
  warm (HostAppWeb.Warmup).
  """

  @retry_after_s 1

  @doc "`conn` answered 503 with `Retry-After`, and halted."
  @spec retry_later(Plug.Conn.t()) :: Plug.Conn.t()
  def retry_later(conn) do
    conn
    |> Plug.Conn.put_resp_header("retry-after", Integer.to_string(@retry_after_s))
    |> Plug.Conn.put_resp_content_type("application/json")
    |> Plug.Conn.send_resp(503, ~s({"errors":{"detail":"Service Unavailable"}}))
    |> Plug.Conn.halt()
  end
end
