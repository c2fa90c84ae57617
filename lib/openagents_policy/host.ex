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

  The configuration is read once, at the first call that needs a host module
  (so `config/config.exs` and `config/runtime.exs` both work), and kept in
  `:persistent_term`, because an application-environment lookup on every
  request would cost more than the decision it serves. To change it in a
  running system, or in a test, call `configure/1`.

  Two structs are recognised by module name and never called:
  `OpenAgents.Accounts.User` and `OpenAgents.Transparency.ArtifactLink`
  (`user_struct/0` and `link_struct/0`). The host is asked only on the paths
  that need it: a viewer that is a user, `viewer/2`, and minting a link.
  """

  @user OpenAgents.Accounts.User
  @link OpenAgents.Transparency.ArtifactLink
  @defaults %{
    accounts: OpenAgents.Accounts,
    repositories: OpenAgents.Repositories,
    artifact_link: @link,
    repo: OpenAgents.Repo
  }
  # An atom key: :persistent_term hashes it at a fraction of a tuple's cost.
  @cache __MODULE__

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
    do: if(module(:accounts).admin?(user), do: true, else: false)

  @doc """
  A user's relationship to `repository`, in the order the host is asked:
  `:operator` when `Accounts.admin?/1` says so, else `:member` when
  `Repositories.member?/2` does, else `:stranger`. Either answer is read as
  truthy, as the original's `cond` read it.
  """
  @spec relationship(term(), term()) :: :operator | :member | :stranger
  def relationship(repository, user) do
    %{accounts: accounts, repositories: repositories} = modules()

    cond do
      accounts.admin?(user) -> :operator
      repositories.member?(repository, user) -> :member
      true -> :stranger
    end
  end

  @doc "Builds an `ArtifactLink` changeset from `attrs` and inserts it through the host's repo."
  @spec insert_link(map()) :: term()
  def insert_link(attrs) do
    link = module(:artifact_link)
    repo = module(:repo)
    link.__struct__() |> link.changeset(attrs) |> repo.insert()
  end

  @doc """
  Points the library at other host modules, now: each of `modules`' keys
  (`:accounts`, `:repositories`, `:artifact_link`, `:repo`) is written to the
  application environment and the cached configuration is read again. A key
  given `nil` goes back to its default. Returns the configuration before the
  change, which `configure/1` takes back to restore it.

      previous = OpenAgentsPolicy.Host.configure(repo: MyApp.TestRepo)
      # ...
      OpenAgentsPolicy.Host.configure(previous)
  """
  @spec configure(keyword() | map()) :: %{atom() => module()}
  def configure(modules) do
    previous = modules()

    for {key, _module} <- modules, not Map.has_key?(@defaults, key) do
      raise ArgumentError, "unknown host module key #{inspect(key)}"
    end

    for {key, module} <- modules do
      if module,
        do: Application.put_env(:openagents_policy, key, module),
        else: Application.delete_env(:openagents_policy, key)
    end

    :persistent_term.erase(@cache)
    previous
  end

  @doc "The host modules in use, by key."
  @spec modules() :: %{atom() => module()}
  def modules do
    case :persistent_term.get(@cache, nil) do
      nil ->
        modules =
          Map.new(@defaults, fn {key, default} ->
            {key, Application.get_env(:openagents_policy, key, default)}
          end)

        :persistent_term.put(@cache, modules)
        modules

      modules ->
        modules
    end
  end

  defp module(key), do: Map.fetch!(modules(), key)
end
