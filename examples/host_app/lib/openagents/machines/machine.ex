defmodule OpenAgents.Machines.Machine do
  @moduledoc """
  A paired computer (`machines`), with the host's columns. The library reads
  only `status` (`active` or `revoked`, a database check) and `revoked_at`;
  whether it is online is live state, kept by `HostApp.Presence`.
  """
  use OpenAgents.Schema

  schema "machines" do
    belongs_to :user, OpenAgents.Accounts.User
    field :name, :string
    field :tier, :string
    field :platform, :string
    field :agent_version, :string
    field :roots, {:array, :string}, default: []
    field :token_digest, :string
    field :token_expires_at, :utc_datetime
    field :status, :string, default: "active"
    field :revoked_at, :utc_datetime
    field :last_seen_at, :utc_datetime
    field :last_probe, :map
    field :scoped_forge_credentials_enabled, :boolean, default: false
    timestamps()
  end

  @type t :: %__MODULE__{}
end
