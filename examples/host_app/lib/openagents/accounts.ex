defmodule OpenAgents.Accounts.User do
  @moduledoc """
  Stand-in for the host's user. Operator status is a `role`, read by
  `OpenAgents.Accounts.admin?/1`; deliberately not an `:admin` key, which the
  ladder would read as a viewer descriptor.
  """
  defstruct [:id, :email, :handle, role: "user"]
  @type t :: %__MODULE__{}
end

defmodule OpenAgents.Accounts do
  @moduledoc "Stand-in for the host's accounts context: only `admin?/1` is called by the library."
  alias OpenAgents.Accounts.User

  @spec admin?(User.t() | term()) :: boolean()
  def admin?(%User{role: "operator"}), do: true
  def admin?(_user), do: false
end
