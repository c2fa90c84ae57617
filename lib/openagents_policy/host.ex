defmodule OpenAgentsPolicy.Host do
  @moduledoc """
  The host application's modules, as this library calls them.

  The seeds called four host modules directly. This library calls the same
  functions, on modules named in application config, so it compiles and runs
  with none of them present and a host (or a test) can point it elsewhere:

  | key | default | what is called |
  | --- | --- | --- |
  | `:accounts` | `OpenAgents.Accounts` | `admin?/1` |
  | `:repositories` | `OpenAgents.Repositories` | `member?/2` |
  | `:artifact_link` | `OpenAgents.Transparency.ArtifactLink` | `__struct__/0`, `changeset/2` |
  | `:repo` | `OpenAgents.Repo` | `insert/1` |

      config :openagents_policy, repo: MyApp.Repo

  Two structs are recognised by module name and never called:
  `OpenAgents.Accounts.User` and `OpenAgents.Transparency.ArtifactLink`
  (`user_struct/0` and `link_struct/0`). Each lookup happens at call time, and
  only on the paths that need the host: a viewer that is a user, `viewer/2`,
  and minting a link.
  """

  @user OpenAgents.Accounts.User
  @link OpenAgents.Transparency.ArtifactLink

  @doc "The host's user struct module, recognised by name."
  @spec user_struct() :: module()
  def user_struct, do: @user

  @doc "The host's artifact link struct module, recognised by name."
  @spec link_struct() :: module()
  def link_struct, do: @link

  @doc """
  The one fact about a viewer the Rust core cannot compute itself: whether the
  host calls a user an operator. `nil` for anything that is not a user, so
  the host is asked only about users.
  """
  @spec user_admin(term()) :: boolean() | nil
  def user_admin(%{__struct__: @user} = user), do: admin?(user)
  def user_admin(_viewer), do: nil

  @doc "The host's `Accounts.admin?/1`, as a boolean (its answer is read as truthy)."
  @spec admin?(term()) :: boolean()
  def admin?(user),
    do: if(module(:accounts, OpenAgents.Accounts).admin?(user), do: true, else: false)

  @doc "The host's `Repositories.member?/2`, as given."
  @spec member?(term(), term()) :: term()
  def member?(repository, user),
    do: module(:repositories, OpenAgents.Repositories).member?(repository, user)

  @doc "Builds an `ArtifactLink` changeset from `attrs` and inserts it through the host's repo."
  @spec insert_link(map()) :: term()
  def insert_link(attrs) do
    link = module(:artifact_link, @link)
    repo = module(:repo, OpenAgents.Repo)
    link.__struct__() |> link.changeset(attrs) |> repo.insert()
  end

  defp module(key, default), do: Application.get_env(:openagents_policy, key, default)
end
