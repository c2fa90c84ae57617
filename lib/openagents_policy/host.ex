defmodule OpenAgentsPolicy.Host do
  @moduledoc """
  The host application's modules, as this library calls them: named in
  application config, so the library compiles and runs with none of them
  present and a host, or a test, can name others (guides/host-configuration.md).

  | key | default | what is called |
  | --- | --- | --- |
  | `:accounts` | `OpenAgents.Accounts` | `admin?/1` |
  | `:repositories` | `OpenAgents.Repositories` | `member?/2` |
  | `:artifact_link` | `OpenAgents.Transparency.ArtifactLink` | `__struct__/0`, `changeset/2` |
  | `:repo` | `OpenAgents.Repo` | `insert/1` |
  | `:user` | `OpenAgents.Accounts.User` | nothing: recognised by name |

      config :openagents_policy, repo: MyApp.Repo

  `:artifact_link` and `:user` also name the structs read as a link and as a
  user, beside the default names; a struct of any other module is read as a
  plain map. `:unloaded_link` says what a record whose link was not preloaded
  reads (`unloaded_link/0`). A call reads each setting it needs, so a change
  holds from the next call; `override/1` changes them for one process and
  the processes that name it in their `$callers` only. Per key, the nearest
  override wins, then the application environment, then the default.
  Refused with `NimbleOptions.ValidationError`: an unknown key, a module
  that is not an atom, and an `:unloaded_link` other than `:tier_column`,
  `:dark` or `:raise`.
  """

  @user OpenAgents.Accounts.User
  @link OpenAgents.Transparency.ArtifactLink
  @unloaded_modes [:tier_column, :dark, :raise]
  @defaults %{
    accounts: OpenAgents.Accounts,
    repositories: OpenAgents.Repositories,
    artifact_link: @link,
    repo: OpenAgents.Repo,
    user: @user,
    unloaded_link: :tier_column
  }
  # What configure/1 and override/1 take (nil, a key's default, aside).
  @schema NimbleOptions.new!(
            Enum.map(@defaults, fn
              {:unloaded_link, _mode} -> {:unloaded_link, [type: {:in, @unloaded_modes}]}
              {key, _module} -> {key, [type: :atom]}
            end)
          )
  # Set, once and for good, when a process first overrides: until then no
  # call looks for overrides.
  @overridden {__MODULE__, :overridden}
  # The process-dictionary key of a process's override.
  @override {__MODULE__, :override}

  @typedoc """
  A configuration key: a host module (`:accounts`, `:repositories`,
  `:artifact_link`, `:repo`, `:user`) or the `:unloaded_link` setting.
  """
  @type key :: :accounts | :repositories | :artifact_link | :repo | :user | :unloaded_link

  @typedoc "What a record with a link that was not loaded reads: see `unloaded_link/0`."
  @type unloaded_mode :: :tier_column | :dark | :raise

  @doc "Whether a struct of `module` is a link: the default name, or the configured `:artifact_link`."
  @spec link?(module()) :: boolean()
  def link?(module), do: module == @link or module == module(:artifact_link)

  @doc "Whether a struct of `module` is a user: the default name, or the configured `:user`."
  @spec user?(module()) :: boolean()
  def user?(module), do: module == @user or module == module(:user)

  @doc """
  What `effective_tier/2` makes of a record whose `:artifact_link` is
  `%Ecto.Association.NotLoaded{}` while its `artifact_link_id` is set (a
  link the caller forgot to preload), the `:unloaded_link` setting:

  | value | what the record reads |
  | --- | --- |
  | `:tier_column` (default: as the OpenAgents app reads it) | its tier column: a revoked link is not seen |
  | `:dark` | `dark`, for every viewer |
  | `:raise` | nothing: `ArgumentError`, saying to preload `:artifact_link` |

  A host should use `:raise` in dev and test and `:dark` in production. A
  record whose `artifact_link_id` is `nil` (or absent) reads its tier column
  in every mode. Any other configured value raises
  `NimbleOptions.ValidationError`.
  """
  @spec unloaded_link() :: unloaded_mode()
  def unloaded_link do
    case module(:unloaded_link) do
      mode when mode in @unloaded_modes ->
        mode

      other ->
        {:error, error} = NimbleOptions.validate([unloaded_link: other], @schema)
        raise error
    end
  end

  @typedoc "A tier as a NIF takes it: an atom, or a binary of at most 64 bytes."
  @type tier_term :: atom() | binary()

  @typedoc "A viewer's class: what the core decides on, the account aside."
  @type viewer_class ::
          :operator
          | {:user, boolean()}
          | {:tiered, tier_term()}
          | :account
          | {:word, tier_term()}
          | :nobody

  @doc """
  A viewer reduced, once, to what the core decides on and the account it
  reads for: `{class, account}`. The shapes in the core's order: a map with
  `admin: true`; a user (a struct of the default or configured `:user`
  module, with the host's `admin?/1` answer; it reads for its `account_id`
  when set, else its `id`); a map with `:tier`; a map with `:account_id`;
  a binary or a non-nil atom, a tier word; anything else, nobody.
  """
  @spec viewer(term()) :: {viewer_class(), term()}
  def viewer(%{admin: true}), do: {:operator, nil}

  def viewer(%{__struct__: @user} = user), do: user(user)

  def viewer(%{__struct__: module} = viewer),
    do: if(module == module(:user), do: user(viewer), else: viewer_map(viewer))

  def viewer(%{} = viewer), do: viewer_map(viewer)

  def viewer(word) when is_binary(word) or (is_atom(word) and word != nil),
    do: {{:word, tier(word)}, nil}

  def viewer(_nobody), do: {:nobody, nil}

  defp viewer_map(%{tier: tier} = viewer),
    do: {{:tiered, tier(tier)}, Map.get(viewer, :account_id)}

  defp viewer_map(%{account_id: account}), do: {:account, account}
  defp viewer_map(_map), do: {:nobody, nil}

  defp user(user) do
    account = with nil <- Map.get(user, :account_id), do: Map.get(user, :id)
    {{:user, admin?(user)}, account}
  end

  @doc "A tier bounded for a NIF: an atom, or `word/1` of anything else."
  @spec tier(term()) :: tier_term()
  def tier(tier) when is_atom(tier), do: tier
  def tier(tier), do: word(tier)

  @doc """
  A word bounded for a NIF: a binary of at most 64 bytes, longer than any
  word of the core's vocabularies; anything else is no word, `nil`.
  """
  @spec word(term()) :: binary() | nil
  def word(word) when is_binary(word) and byte_size(word) <= 64, do: word
  def word(_not_a_word), do: nil

  @doc """
  A subject for a viewer reading for `account`: a link (`link?/1`) is
  `link/2`'s, anything else `{:tier, tier}`.
  """
  @spec subject(term(), term()) ::
          {:link, :live | :revoked, tier_term(), boolean()} | {:tier, tier_term()}
  def subject(%{__struct__: module} = subject, account) do
    if link?(module), do: link(subject, account), else: {:tier, tier(subject)}
  end

  def subject(tier, _account), do: {:tier, tier(tier)}

  @doc """
  A link for a viewer reading for `account`: `{:link, state, tier, owns?}`,
  ownership compared here with `==`, so no account id reaches a NIF. A live
  link without `:tier` raises the `KeyError` the host's `link.tier` raises.
  """
  @spec link(map(), term()) :: {:link, :live | :revoked, tier_term(), boolean()}
  def link(%{revoked_at: nil, tier: tier} = link, account),
    do: {:link, :live, tier(tier), owns?(Map.get(link, :account_id), account)}

  def link(%{revoked_at: nil} = link, _account), do: raise(KeyError, key: :tier, term: link)
  def link(link, _account), do: {:link, :revoked, tier(Map.get(link, :tier)), false}

  @doc "Whether a reader for `account` owns a link of `owner`: both set, and `==`."
  @spec owns?(term(), term()) :: boolean()
  def owns?(nil, _account), do: false
  def owns?(_owner, nil), do: false
  def owns?(owner, account), do: owner == account

  @doc "The host's `Accounts.admin?/1`, as a boolean (its answer is read as truthy)."
  @spec admin?(term()) :: boolean()
  def admin?(user), do: if(module(:accounts).admin?(user), do: true, else: false)

  @doc "A user's relationship to `repository`: `:operator`, `:member` or `:stranger`, asked in that order."
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
  `:artifact_link`, `:repo`, `:user`, and the `:unloaded_link` setting) is
  written to the application environment, as `Application.put_env/3` would;
  a key given `nil` goes back to its default. Returns the configuration
  before the change (overrides aside), which `configure/1` takes back to
  restore it. An invalid key or value raises `NimbleOptions.ValidationError`
  before anything is written.

  Each key takes effect on its own. In tests, prefer `override/1`, which no
  other test sees.

      previous = OpenAgentsPolicy.Host.configure(repo: MyApp.TestRepo)
      # ...
      OpenAgentsPolicy.Host.configure(previous)
  """
  @spec configure(keyword() | map()) :: %{key() => module()}
  def configure(modules) do
    modules = validate!(modules)
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
  the process or with `clear_override/0`. An invalid key or value raises
  `NimbleOptions.ValidationError`.

      setup do
        OpenAgentsPolicy.Host.override(accounts: MyTest.Accounts)
      end
  """
  @spec override(keyword() | map()) :: :ok
  def override(modules) do
    modules = validate!(modules)

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

  @doc "The host modules (and `:unloaded_link`) the calling process uses, by key (overrides included)."
  @spec modules() :: %{key() => module()}
  def modules, do: Map.new(@defaults, fn {key, _default} -> {key, module(key)} end)

  defp configured do
    Map.new(@defaults, fn {key, default} ->
      {key, Application.get_env(:openagents_policy, key, default)}
    end)
  end

  # `modules`, once validated: a key given nil is checked as its default.
  defp validate!(modules) do
    _ =
      NimbleOptions.validate!(
        Enum.map(modules, &with({key, nil} <- &1, do: {key, @defaults[key]})),
        @schema
      )

    modules
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
