defmodule OpenAgents.Repositories.Repository do
  @moduledoc "Stand-in for a repository row: who owns it and who is a member."
  defstruct [:id, :name, :owner_id, visibility: "public", member_ids: []]
  @type t :: %__MODULE__{}
end

defmodule OpenAgents.Repositories do
  @moduledoc "Stand-in for the host's repositories context: only `member?/2` is called by the library."
  alias OpenAgents.Accounts.User
  alias OpenAgents.Repositories.Repository

  @spec member?(Repository.t(), User.t()) :: boolean()
  def member?(%Repository{owner_id: owner, member_ids: members}, %User{id: id})
      when is_binary(id),
      do: id == owner or id in members

  def member?(_repository, _user), do: false
end
