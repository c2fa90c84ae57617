defmodule OpenAgentsPolicy.Host.Repositories do
  @moduledoc "What the library asks of the host's `:repositories` module (`OpenAgents.Repositories`)."

  @doc "Whether `user`, not an operator, is a member of `repository` (`ledger`): truthy is yes."
  @callback member?(repository :: term(), user :: struct()) :: as_boolean(term())
end
