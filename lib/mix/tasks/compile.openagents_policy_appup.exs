defmodule Mix.Tasks.Compile.OpenagentsPolicyAppup do
  @moduledoc """
  Writes `ebin/openagents_policy.appup`, the library's part in a host's
  relup, after the Elixir compiler (see `:compilers` in mix.exs): a host
  builds its relup with `systools:make_relup/4` (forecastle's `mix
  forecastle.relup`, or any relup tool) and needs nothing more from the
  library.

  The appup is made from what this build is, not written by hand: its
  version, and every module now in the library's ebin. One instruction list
  serves an upgrade from and a downgrade to every other version (the version
  pattern `<<".*">>`), because it names what must happen whatever the other
  version was:

      {apply, {'Elixir.OpenAgentsPolicy.Upgrade', check, [Direction, Vsn]}},
      point_of_no_return,
      {load_module, 'Elixir.OpenAgentsPolicy.Native', soft_purge, soft_purge, []},
      {load_module, Caller, soft_purge, soft_purge, []} ... % every module that calls Native or holds its tables
      {load_module, Mod, soft_purge, soft_purge, []} ...    % every other module

  `OpenAgentsPolicy.Upgrade.check/2` refuses, before anything is loaded, a
  NIF library the running VM could not load. `Native` loads first, and with
  it its new version's library (a new path); the modules that call it (read from each
  module's import table) or hold tables computed from the core at compile
  time (`use OpenAgentsPolicy.Native`, which persists an attribute in the
  beam) come right after, so the relup ends with tables and NIF from one
  build. `soft_purge` before: a relup is
  refused if a process still runs code two versions old, rather than killing
  it; `soft_purge` after: the old code, and with `Native`'s the old library,
  is purged as soon as no process runs it (at once, for code called the way
  this library is).

  A module of the other version that this one no longer has is not deleted
  (the appup of one build cannot know it); it stays loaded and unused.
  """
  use Mix.Task.Compiler

  @app :openagents_policy
  @native OpenAgentsPolicy.Native

  @impl true
  def run(_args) do
    ebin = Mix.Project.compile_path()
    file = Path.join(ebin, "#{@app}.appup")
    content = ebin |> modules() |> appup(Mix.Project.config()[:version]) |> format()

    if File.read(file) == {:ok, content} do
      {:noop, []}
    else
      File.write!(file, content)
      {:ok, []}
    end
  end

  @impl true
  def manifests, do: []

  @impl true
  def clean, do: File.rm(Path.join(Mix.Project.compile_path(), "#{@app}.appup"))

  @doc false
  # The appup term for `modules` (`{module, calls_native?}`) at `version`.
  def appup(modules, version) do
    unless List.keymember?(modules, @native, 0) do
      Mix.raise("#{inspect(@native)} is not among the compiled modules: no appup can be written")
    end

    # The modules that call Native or hold tables computed from it.
    {callers, rest} =
      modules
      |> List.keydelete(@native, 0)
      |> Enum.sort()
      |> Enum.split_with(fn {_module, calls_native?} -> calls_native? end)

    order = [@native | Enum.map(callers ++ rest, &elem(&1, 0))]

    instructions = fn direction ->
      [
        {:apply, {OpenAgentsPolicy.Upgrade, :check, [direction, version]}},
        :point_of_no_return
        | for(mod <- order, do: {:load_module, mod, :soft_purge, :soft_purge, []})
      ]
    end

    {to_charlist(version), [{".*", instructions.(:up)}], [{".*", instructions.(:down)}]}
  end

  defp modules(ebin) do
    for file <- Path.wildcard(Path.join(ebin, "*.beam")) do
      {:ok, {module, [imports: imports, attributes: attributes]}} =
        :beam_lib.chunks(String.to_charlist(file), [:imports, :attributes])

      {module,
       Enum.any?(imports, &match?({@native, _, _}, &1)) or
         Keyword.has_key?(attributes, :openagents_policy_tables)}
    end
  end

  defp format(term), do: IO.iodata_to_binary(:io_lib.format(~c"~tp.~n", [term]))
end
