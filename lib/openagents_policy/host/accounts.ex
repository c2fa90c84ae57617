defmodule OpenAgentsPolicy.Host.Accounts do
  @moduledoc "What the library asks of the host's `:accounts` module (`OpenAgents.Accounts`)."

  @doc "Whether `user` is an operator (`glass` everywhere): any truthy answer is yes."
  @callback admin?(user :: struct()) :: as_boolean(term())
end
