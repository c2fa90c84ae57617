defmodule OpenAgents.Repositories do
  @moduledoc """
  The repositories context. The library calls `member?/2` (is this user a
  member of this repository?), which asks the database each time.
  """
  @behaviour OpenAgentsPolicy.Host.Repositories
  import Ecto.Query
  alias OpenAgents.Accounts.User
  alias OpenAgents.Repo
  alias OpenAgents.Repositories.{Membership, Repository}

  @doc "Whether `user` is a member of `repository`; anything but a persisted pair is not."
  @spec member?(Repository.t() | term(), User.t() | term()) :: boolean()
  def member?(%Repository{id: repository_id}, %User{id: user_id})
      when is_binary(repository_id) and is_binary(user_id) do
    Repo.exists?(
      from m in Membership, where: m.repository_id == ^repository_id and m.user_id == ^user_id
    )
  end

  def member?(_repository, _user), do: false

  @doc "The repository with this slug, or `nil` (also for a slug no text column could hold)."
  @spec get_by_slug(String.t()) :: Repository.t() | nil
  def get_by_slug(slug) when is_binary(slug),
    do: if(OpenAgents.Schema.text?(slug), do: Repo.get_by(Repository, slug: slug))
end
