defmodule HostAppWeb.LinkController do
  @moduledoc """
  `POST /api/links/:id/revoke`: the link's account or an operator stamps
  `revoked_at` (200, `{"data": {"id", "revoked_at"}}`); from then on
  everything the link governed is dark to every reader. A link already
  revoked is 409, and keeps its first `revoked_at` and tombstone (of two
  concurrent revokes, exactly one stamps it). Another user gets 403, an
  anonymous reader 401, an unknown or malformed id 404.
  """
  use HostAppWeb, :controller

  alias HostApp.Attempts

  @doc false
  def revoke(%{assigns: %{current_user: nil}} = conn, _params), do: ErrorJSON.send(conn, 401)

  def revoke(%{assigns: %{current_user: user}} = conn, %{"id" => id}) do
    case Attempts.revoke_link(id, user) do
      {:ok, link} -> json(conn, %{data: %{id: link.id, revoked_at: link.revoked_at}})
      {:error, :not_found} -> ErrorJSON.send(conn, 404)
      {:error, :forbidden} -> ErrorJSON.send(conn, 403)
      {:error, :already_revoked} -> ErrorJSON.send(conn, 409)
    end
  end
end
