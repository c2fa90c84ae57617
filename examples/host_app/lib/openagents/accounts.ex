defmodule OpenAgents.Accounts do
  @moduledoc """
  The accounts context. The library calls `admin?/1` (is this user an
  operator?); the API finds the reader by handle.
  """
  @behaviour OpenAgentsPolicy.Host.Accounts
  import Ecto.Query
  alias OpenAgents.Accounts.User
  alias OpenAgents.Repo

  @doc """
  Whether `user` is an operator, read from the database rather than from the
  struct, so a demotion counts on the next request. Anything but a persisted
  user is not.
  """
  @spec admin?(User.t() | term()) :: boolean()
  def admin?(%User{id: id}) when is_binary(id),
    do: Repo.exists?(from u in User, where: u.id == ^id and u.operator)

  def admin?(_user), do: false

  @doc "The user with this handle, or `nil` (also for a handle no text column could hold)."
  @spec get_by_handle(String.t()) :: User.t() | nil
  def get_by_handle(handle) when is_binary(handle),
    do: if(OpenAgents.Schema.text?(handle), do: Repo.get_by(User, handle: handle))
end
