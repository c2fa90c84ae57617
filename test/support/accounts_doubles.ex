defmodule OpenAgentsPolicy.Test.Everyone do
  @moduledoc false
  @behaviour OpenAgentsPolicy.Host.Accounts
  # An `:accounts` module that calls every user an operator.
  def admin?(_user), do: true
end

defmodule OpenAgentsPolicy.Test.NoOne do
  @moduledoc false
  @behaviour OpenAgentsPolicy.Host.Accounts
  # An `:accounts` module that calls no user an operator.
  def admin?(_user), do: false
end
