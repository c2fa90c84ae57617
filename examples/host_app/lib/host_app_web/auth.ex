defmodule HostAppWeb.Auth do
  @moduledoc """
  Who is reading. `Authorization: Bearer <handle>` names a user by handle,
  standing in for the host's real authentication: the reader is that
  `%User{}` (`conn.assigns.current_user`). No header is an anonymous reader
  (`nil`). A handle no user has, or any other kind of header, is refused
  with 401 before the route runs.
  """
  @behaviour Plug
  import Plug.Conn

  alias OpenAgents.Accounts

  @impl true
  def init(opts), do: opts

  @impl true
  def call(conn, _opts) do
    case get_req_header(conn, "authorization") do
      [] ->
        assign(conn, :current_user, nil)

      ["Bearer " <> handle] ->
        case Accounts.get_by_handle(String.trim(handle)) do
          nil -> refuse(conn)
          user -> assign(conn, :current_user, user)
        end

      _other ->
        refuse(conn)
    end
  end

  defp refuse(conn) do
    conn
    |> HostAppWeb.ErrorJSON.send(401)
    |> halt()
  end
end
