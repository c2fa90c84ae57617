defmodule OpenAgentsPolicy.Host do
  @moduledoc """
  The host application's modules, as this library calls them: named in application
  config, so the library compiles and runs with none present and a host, or a test,
  can name others, each held to the behaviour it declares:
  `OpenAgentsPolicy.Host.Accounts`, `OpenAgentsPolicy.Host.Repositories`,
  `OpenAgentsPolicy.Host.ArtifactLink`, `OpenAgentsPolicy.Host.Repo` (`:user` names
  the user struct).

      config :openagents_policy, repo: MyApp.Repo

  Per key, the nearest `override/1` wins, then the application environment,
  then the default. [Host configuration](host-configuration.md): each key's
  default and use, when a setting is read, what is refused.
  """

  @app :openagents_policy
  @unloaded_modes [:tier_column, :dark, :raise]
  # Each host module's key, default and behaviour (none for the user struct).
  @modules [
    accounts: {OpenAgents.Accounts, __MODULE__.Accounts},
    repositories: {OpenAgents.Repositories, __MODULE__.Repositories},
    artifact_link: {OpenAgents.Transparency.ArtifactLink, __MODULE__.ArtifactLink},
    repo: {OpenAgents.Repo, __MODULE__.Repo},
    user: {OpenAgents.Accounts.User, nil}
  ]
  @defaults Map.new([unloaded_link: :tier_column] ++ for({k, {d, _}} <- @modules, do: {k, d}))
  # What configure/1 and override/1 take besides nil: a module held to its behaviour.
  hosts = for {k, {d, b}} <- @modules, do: {k, type: {:custom, __MODULE__, :host_module, [d, b]}}
  @schema NimbleOptions.new!([{:unloaded_link, type: {:in, @unloaded_modes}} | hosts])
  # Set for good when a process first overrides (until then no call looks for its
  # callers'); a process's override is in its dictionary at @override.
  @overridden {__MODULE__, :overridden}
  @override {__MODULE__, :override}

  @typedoc "A configuration key: a host module's, or the `:unloaded_link` setting."
  @type key :: :accounts | :repositories | :artifact_link | :repo | :user | :unloaded_link

  @typedoc "What a record with a link that was not loaded reads: see `unloaded_link/0`."
  @type unloaded_mode :: :tier_column | :dark | :raise

  @doc """
  What `effective_tier/2` makes of a record whose `:artifact_link` is
  `%Ecto.Association.NotLoaded{}` while its `artifact_link_id` is set (a forgotten
  preload): `:tier_column` (the default, as the app reads it), `:dark` or `:raise`
  (`ArgumentError`); any other value raises `NimbleOptions.ValidationError`. Which
  to choose: [Host configuration](host-configuration.md), "A link that was not loaded".
  """
  @spec unloaded_link() :: unloaded_mode()
  def unloaded_link do
    with mode when mode not in @unloaded_modes <- module(:unloaded_link),
         do: raise(elem(NimbleOptions.validate([unloaded_link: mode], @schema), 1))
  end

  @doc """
  Points the library at other host modules, system-wide, from the next call: each
  key of `modules` is written to the application environment (`nil`: back to its
  default), each taking effect on its own. Returns the configuration before
  (overrides aside), which `configure/1` takes back. An invalid key or value raises
  `NimbleOptions.ValidationError` before anything is written. In tests, prefer
  `override/1`, which no other test sees.

      previous = OpenAgentsPolicy.Host.configure(repo: MyApp.TestRepo)
      # ...
      OpenAgentsPolicy.Host.configure(previous)
  """
  @spec configure(keyword() | map()) :: %{key() => module()}
  def configure(modules) do
    modules = validate!(modules)

    previous = Map.new(@defaults, fn {k, d} -> {k, Application.get_env(@app, k, d)} end)

    for {key, mod} <- modules do
      if mod, do: Application.put_env(@app, key, mod), else: Application.delete_env(@app, key)
    end

    previous
  end

  @doc """
  Uses other host modules for the calling process and those naming it in their
  `$callers` (its `Task`s) alone, as an `async: true` test needs. Keys not given
  keep what they were; `nil` drops a key's override. It ends with the process or
  `clear_override/0`. An invalid key or value raises `NimbleOptions.ValidationError`.

      setup do
        OpenAgentsPolicy.Host.override(accounts: MyTest.Accounts)
      end
  """
  @spec override(keyword() | map()) :: :ok
  def override(modules) do
    modules = validate!(modules)

    {dropped, set} = Enum.split_with(modules, &(elem(&1, 1) == nil))
    overrides = Map.drop(Process.get(@override, %{}), Keyword.keys(dropped))
    Process.put(@override, Map.merge(overrides, Map.new(set)))
    # A :persistent_term write makes every process scan its heap: once only.
    unless :persistent_term.get(@overridden, false), do: :persistent_term.put(@overridden, true)
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

  # `modules`, once validated: a key given nil is checked as its default.
  defp validate!(modules) do
    defaulted = Enum.map(modules, &with({key, nil} <- &1, do: {key, @defaults[key]}))
    _ = NimbleOptions.validate!(defaulted, @schema)
    modules
  end

  # NimbleOptions' check of a module given to configure/1 or override/1: the key's
  # default as it is (as the application environment), else one with the callbacks.
  @doc false
  @spec host_module(term(), module(), module() | nil) :: {:ok, module()} | {:error, String.t()}
  def host_module(default, default, _behaviour), do: {:ok, default}

  def host_module(module, _default, behaviour) when is_atom(module) do
    _ = Code.ensure_loaded(module)
    callbacks = if behaviour, do: behaviour.behaviour_info(:callbacks), else: []

    case for {f, n} <- callbacks, not function_exported?(module, f, n), do: "#{f}/#{n}" do
      [] -> {:ok, module}
      missing -> {:error, "#{inspect(module)} does not export #{Enum.join(missing, ", ")}"}
    end
  end

  def host_module(other, _, _), do: {:error, "expected a module, got: #{inspect(other)}"}

  @doc false
  # The defaults, for OpenAgentsPolicy.Host.Boundary's compiled matches.
  def defaults, do: @defaults

  @doc false
  # The module (or setting) `key` names for the calling process: one clause per
  # key, its default a literal: the override check, then the application environment.
  for {key, default} <- @defaults do
    def module(unquote(key)) do
      with nil <- overriding(unquote(key)),
           do: Application.get_env(@app, unquote(key), unquote(default))
    end
  end

  # The calling process's own override, then, once some process has overridden,
  # its callers' (their dictionaries copied: a price a test run alone pays). A
  # request, in production, pays a process-dictionary and a :persistent_term read.
  defp overriding(key) do
    case Process.get(@override) do
      %{^key => module} -> module
      _ -> if :persistent_term.get(@overridden, false), do: caller_override(key)
    end
  end

  defp caller_override(key) do
    Enum.find_value(Process.get(:"$callers", []), fn pid ->
      with {:dictionary, dictionary} <- Process.info(pid, :dictionary),
           {@override, %{^key => module}} <- List.keyfind(dictionary, @override, 0),
           do: module,
           else: (_ -> nil)
    end)
  end
end
