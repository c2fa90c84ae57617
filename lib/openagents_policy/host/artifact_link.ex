defmodule OpenAgentsPolicy.Host.ArtifactLink do
  @moduledoc """
  What the library asks of the host's `:artifact_link` module
  (`OpenAgents.Transparency.ArtifactLink`), whose structs are the links read.
  """

  @doc "The empty link (`defstruct`'s, or an Ecto schema's), which `link_for_attempt/3` fills."
  @callback __struct__() :: struct()

  @doc "A changeset of `link` with the core's link `attrs`, handed to the `:repo`'s `insert/1`."
  @callback changeset(link :: struct(), attrs :: map()) :: term()
end
