defmodule OpenAgentsPolicy.Host.Repo do
  @moduledoc "What the library asks of the host's `:repo` module (`OpenAgents.Repo`)."

  @doc "Persists the link's changeset (Ecto's `insert/1`): `link_for_attempt/3`'s answer."
  @callback insert(changeset :: term()) :: {:ok, struct()} | {:error, term()}
end
