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

  ## Where the modules come from

  Every call that needs a host module reads it, so a change is used from
  the next call, however it is made: `config/config.exs`, `config/runtime.exs`,
  `Application.put_env/3`, a release's configuration change during a hot
  upgrade, or `configure/1`. There is no cache to go stale and no cache for a
  racing reader to refill with what was just replaced. The price is one
  application-environment lookup (an ETS read) per host module a call uses;
  the README gives what it costs `viewer/2`.

  A test that needs other host modules calls `override/1`: the override
  holds for the calling process and for every process that names it in its
  `$callers` (`Task`s it starts, and processes that follow that convention),
  so tests that override in `async: true` modules never see each other's
  modules. It ends with the process, or with `clear_override/0`. Looking for
  an override costs two process-dictionary reads in a process without
  `$callers`, and one `:persistent_term` read more in one with them, until
  some process has made an override: a system that never overrides pays
  only that.

  Order of precedence, per key: the nearest override (the calling process,
  then its `$callers` in order), then the application environment, then the
  default.

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
  # Set, once and for good, when a process first overrides: until then no
  # call looks for overrides.
  @overridden {__MODULE__, :overridden}
  # The process-dictionary key of a process's override.
  @override {__MODULE__, :override}

  @typedoc "A host module's key: `:accounts`, `:repositories`, `:artifact_link` or `:repo`."
  @type key :: :accounts | :repositories | :artifact_link | :repo

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
    cond do
      module(:accounts).admin?(user) -> :operator
      module(:repositories).member?(repository, user) -> :member
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
  Points the library at other host modules, for the whole system, from the
  next call: each of `modules`' keys (`:accounts`, `:repositories`,
  `:artifact_link`, `:repo`) is written to the application environment, as
  `Application.put_env/3` would; a key given `nil` goes back to its default.
  Returns the configuration before the change (overrides aside), which
  `configure/1` takes back to restore it. An unknown key raises
  `ArgumentError` before anything is written.

  Each key takes effect on its own: a call that reads two keys while both
  are being changed may see one old and one new. In tests, prefer
  `override/1`, which no other test sees.

      previous = OpenAgentsPolicy.Host.configure(repo: MyApp.TestRepo)
      # ...
      OpenAgentsPolicy.Host.configure(previous)
  """
  @spec configure(keyword() | map()) :: %{key() => module()}
  def configure(modules) do
    :ok = check_keys!(modules)
    previous = configured()

    for {key, module} <- modules do
      if module,
        do: Application.put_env(:openagents_policy, key, module),
        else: Application.delete_env(:openagents_policy, key)
    end

    previous
  end

  @doc """
  Uses other host modules for the calling process and the processes that
  name it in their `$callers` (the `Task`s it starts), and nowhere else:
  what a test that runs `async: true` needs. Keys not given keep whatever
  they were; a key given `nil` drops its override. The override ends with
  the process or with `clear_override/0`. An unknown key raises
  `ArgumentError`.

      setup do
        OpenAgentsPolicy.Host.override(accounts: MyTest.Accounts)
      end
  """
  @spec override(keyword() | map()) :: :ok
  def override(modules) do
    :ok = check_keys!(modules)

    overrides =
      Enum.reduce(modules, Process.get(@override, %{}), fn
        {key, nil}, acc -> Map.delete(acc, key)
        {key, module}, acc -> Map.put(acc, key, module)
      end)

    Process.put(@override, overrides)

    # A :persistent_term write makes every process scan its heap: once only.
    unless :persistent_term.get(@overridden, false),
      do: :persistent_term.put(@overridden, true)

    :ok
  end

  @doc "Ends the calling process's `override/1`."
  @spec clear_override() :: :ok
  def clear_override do
    Process.delete(@override)
    :ok
  end

  @doc "The host modules the calling process uses, by key (overrides included)."
  @spec modules() :: %{key() => module()}
  def modules, do: Map.new(@defaults, fn {key, _default} -> {key, module(key)} end)

  defp configured do
    Map.new(@defaults, fn {key, default} ->
      {key, Application.get_env(:openagents_policy, key, default)}
    end)
  end

  defp check_keys!(modules) do
    case Enum.find(modules, fn {key, _module} -> not Map.has_key?(@defaults, key) end) do
      nil -> :ok
      {key, _module} -> raise ArgumentError, "unknown host module key #{inspect(key)}"
    end
  end

  # One clause per key, its default a literal: the lookup is the override
  # check and an application-environment read.
  for {key, default} <- @defaults do
    defp module(unquote(key)) do
      with nil <- overriding(unquote(key)),
           do: Application.get_env(:openagents_policy, unquote(key), unquote(default))
    end
  end

  # The calling process's own override first; then, only in a process that
  # has callers and only once some process has overridden, its callers'.
  # A process with neither (a request, in production) pays two
  # process-dictionary reads.
  defp overriding(key) do
    case Process.get(@override) do
      %{^key => module} ->
        module

      _ ->
        with [_ | _] = callers <- Process.get(:"$callers"),
             true <- :persistent_term.get(@overridden, false),
             do: caller_override(callers, key),
             else: (_ -> nil)
    end
  end

  # Another process's override, read from its dictionary (a copy of it: the
  # price is paid only in a system that overrides, i.e. a test run).
  defp caller_override([], _key), do: nil

  defp caller_override([pid | callers], key) do
    with {:dictionary, dictionary} <- Process.info(pid, :dictionary),
         {@override, %{^key => module}} <- List.keyfind(dictionary, @override, 0) do
      module
    else
      _ -> caller_override(callers, key)
    end
  end
end
