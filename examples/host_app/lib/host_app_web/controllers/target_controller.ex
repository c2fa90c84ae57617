defmodule HostAppWeb.TargetController do
  @moduledoc """
  `GET /api/targets`: the reader's inventory, `{"data": [entry]}` (see
  `HostApp.Delegations`). A user sees the targets it owns, an operator every
  target (authorized only on its own); an anonymous reader gets 401.
  """
  use HostAppWeb, :controller

  import Ecto.Query
  alias HostApp.{Delegations, Presence}
  alias OpenAgents.Accounts
  alias OpenAgents.Box.ConversationBox
  alias OpenAgents.Machines.Machine
  alias OpenAgents.Repo

  @doc false
  def index(%{assigns: %{current_user: nil}} = conn, _params), do: ErrorJSON.send(conn, 401)

  def index(%{assigns: %{current_user: user}} = conn, _params) do
    everyone? = Accounts.admin?(user)
    limit = Delegations.max_targets()
    boxes = Repo.all(visible(ConversationBox, user, everyone?, limit))

    computers =
      for machine <- Repo.all(visible(Machine, user, everyone?, limit)),
          do: %{machine: machine, online?: Presence.online?(machine.id)}

    {:ok, entries} = Delegations.inventory(Enum.take(boxes ++ computers, limit), user.id)
    json(conn, %{data: entries})
  end

  defp visible(schema, user, everyone?, limit) do
    query = from t in schema, order_by: [asc: t.inserted_at, asc: t.id], limit: ^limit
    if everyone?, do: query, else: where(query, [t], t.user_id == ^user.id)
  end
end
