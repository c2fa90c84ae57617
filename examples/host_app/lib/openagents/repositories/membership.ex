defmodule OpenAgents.Repositories.Membership do
  @moduledoc "One user's membership of one repository (unique per pair)."
  use OpenAgents.Schema

  schema "repository_memberships" do
    belongs_to :repository, OpenAgents.Repositories.Repository
    belongs_to :user, OpenAgents.Accounts.User
    timestamps()
  end

  @type t :: %__MODULE__{}
end
