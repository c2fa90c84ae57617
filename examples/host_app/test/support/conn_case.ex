defmodule HostAppWeb.ConnCase do
  @moduledoc """
  A request through the real endpoint (`Phoenix.ConnTest`), against the real
  PostgreSQL in an SQL Sandbox transaction (see `HostApp.DataCase`).
  `get_as/3`, `post_as/4` make a request as one of the five readers; the
  raw body is kept, and `json!/2` decodes it after checking the status and
  that the bytes carry no `SECRET`.
  """
  use ExUnit.CaseTemplate

  using do
    quote do
      import Phoenix.ConnTest
      import HostAppWeb.ConnCase

      import HostApp.DataCase,
        only: [
          readers: 0,
          reader_id: 2,
          seeded: 1,
          hidden_ids: 2,
          descriptor: 2,
          decided_tier: 3,
          field_names: 2
        ]

      alias OpenAgents.Repo
      @endpoint HostAppWeb.Endpoint
    end
  end

  setup tags, do: HostApp.DataCase.checkout(tags)

  @doc "A request as `reader` (a `%User{}` or `nil`), authenticated by its handle."
  def request_as(user, method, path, body \\ nil) do
    conn = Phoenix.ConnTest.build_conn()

    conn =
      if user,
        do: Plug.Conn.put_req_header(conn, "authorization", "Bearer " <> user.handle),
        else: conn

    conn =
      if body,
        do: conn |> Plug.Conn.put_req_header("content-type", "application/json"),
        else: conn

    Phoenix.ConnTest.dispatch(conn, HostAppWeb.Endpoint, method, path, body && encode(body))
  end

  defp encode(body) when is_binary(body), do: body
  defp encode(body), do: Jason.encode!(body)

  @doc "The decoded body of `conn`, after asserting its status, JSON type and no `SECRET` in its bytes."
  def json!(conn, status) do
    body = conn.resp_body
    assert conn.status == status, "expected #{status}, got #{conn.status}: #{body}"
    assert [type | _] = Plug.Conn.get_resp_header(conn, "content-type")
    assert type =~ "application/json"
    refute body =~ "SECRET"
    Jason.decode!(body)
  end
end
