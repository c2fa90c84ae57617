defmodule OpenAgents.Machines.Machine do
  @moduledoc """
  Stand-in for the host's paired computer (`machines`), with the upstream
  fields. `Target.computer_lifecycle/2` reads only `status` and `revoked_at`.
  """
  @fields ~w(id user_id name tier platform agent_version roots token_digest token_expires_at
             status revoked_at last_seen_at last_probe inserted_at updated_at
             scoped_forge_credentials_enabled)a

  defstruct Enum.map(@fields, fn
              :scoped_forge_credentials_enabled -> {:scoped_forge_credentials_enabled, false}
              :status -> {:status, "active"}
              field -> {field, nil}
            end)

  @type t :: %__MODULE__{}

  @doc false
  def __schema__(:fields), do: @fields
end
