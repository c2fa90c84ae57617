defmodule OpenAgentsPolicy.Native do
  @moduledoc false
  # Entry points of the Rust NIF library `openagents_policy_nif`, which
  # `mix compile` builds into priv/native (see the compile.openagents_policy_nif
  # task). The library is loaded when this module is loaded, including while
  # the rest of this library is being compiled.
  #
  # Each build is installed under its own name, named by its content, and the
  # compiler keeps only the current one. This module is compiled against that
  # file: it names it as an @external_resource, so a new build recompiles
  # this module (its old file is gone), and the recompiled module loads the
  # new file. A new path is what makes a running VM load the new code:
  # :erlang.load_nif/2 given a path it has loaded already reuses that library.

  @on_load :load_nif
  @dir "priv/native"

  installed =
    Mix.Project.app_path()
    |> Path.join(@dir)
    |> Path.join("libopenagents_policy_nif-*.so")
    |> Path.wildcard()

  case installed do
    [file] ->
      @external_resource file
      @library Path.join(@dir, Path.basename(file, ".so"))

    files ->
      raise "expected one NIF library in #{Path.join(Mix.Project.app_path(), @dir)}, found " <>
              "#{inspect(files)}: the :openagents_policy_nif compiler installs it and must " <>
              "run before the Elixir compiler (`compilers:` in mix.exs)"
  end

  # A module whose tables are computed from the core as it compiles says so
  # with `use OpenAgentsPolicy.Native`: Mix recompiles it when a new build
  # replaces the library (the @external_resource), and a release's appup
  # loads it right after this module (the attribute, persisted in its beam,
  # which the :openagents_policy_appup compiler reads), so tables and NIF
  # never come from two builds.
  @doc false
  defmacro __using__(_opts) do
    quote do
      @external_resource OpenAgentsPolicy.Native.library_file()
      Module.register_attribute(__MODULE__, :openagents_policy_tables, persist: true)
      @openagents_policy_tables true
    end
  end

  @doc false
  def load_nif do
    path = nif_path()

    case :erlang.load_nif(String.to_charlist(path), 0) do
      :ok ->
        :ok

      {:error, {reason, text}} ->
        :logger.error(
          "OpenAgentsPolicy.Native: loading #{path}.so failed (#{reason}): #{text}\n" <>
            "Build it with `mix compile`, or set OPENAGENTS_POLICY_NIF_PATH to a prebuilt " <>
            "library and recompile."
        )

        {:error, reason}
    end
  end

  # The library this module loads (see __using__/1).
  @doc false
  def library_file, do: nif_path() <> ".so"

  # The app's priv dir, found through the code path. If the code path entry
  # is not named after the app (e.g. `erl -pa some/ebin`), the priv dir next
  # to this module's .beam.
  defp nif_path do
    Application.app_dir(:openagents_policy, @library)
  rescue
    ArgumentError ->
      case :code.which(__MODULE__) do
        beam when is_list(beam) -> Path.expand(Path.join(["..", "..", @library]), beam)
        _ -> @library
      end
  end

  # The NIFs, named as the public functions they serve (guides/rust.md has
  # the table of names). rustler registers each; a stub raises until the
  # library is loaded.

  # Target (lib/openagents/delegations/target.ex)
  def lifecycles(), do: :erlang.nif_error(:nif_not_loaded)
  def delegation_lifecycles(), do: :erlang.nif_error(:nif_not_loaded)
  def custodies(), do: :erlang.nif_error(:nif_not_loaded)
  def kinds(), do: :erlang.nif_error(:nif_not_loaded)
  def custody(_a), do: :erlang.nif_error(:nif_not_loaded)
  def runtime_class(_a), do: :erlang.nif_error(:nif_not_loaded)
  def box_lifecycle(_a), do: :erlang.nif_error(:nif_not_loaded)
  def run_lifecycle(_a), do: :erlang.nif_error(:nif_not_loaded)
  def job_lifecycle(_a), do: :erlang.nif_error(:nif_not_loaded)
  def computer_lifecycle(_a, _b, _c), do: :erlang.nif_error(:nif_not_loaded)
  def seam(_a, _b, _c), do: :erlang.nif_error(:nif_not_loaded)
  def seam_json(_a, _b, _c), do: :erlang.nif_error(:nif_not_loaded)
  def delegation_seam(_a), do: :erlang.nif_error(:nif_not_loaded)
  def delegation_seam_json(_a), do: :erlang.nif_error(:nif_not_loaded)
  def substrates(), do: :erlang.nif_error(:nif_not_loaded)
  def machine_statuses(), do: :erlang.nif_error(:nif_not_loaded)
  def unrecognized_lifecycles(), do: :erlang.nif_error(:nif_not_loaded)
  def field_columns(_a), do: :erlang.nif_error(:nif_not_loaded)

  # WorkDisclosure and the ladder
  def families(), do: :erlang.nif_error(:nif_not_loaded)
  def tiers(), do: :erlang.nif_error(:nif_not_loaded)
  def schedule(), do: :erlang.nif_error(:nif_not_loaded)
  def schedule_json(), do: :erlang.nif_error(:nif_not_loaded)
  def never(_a), do: :erlang.nif_error(:nif_not_loaded)
  def source_columns(_a), do: :erlang.nif_error(:nif_not_loaded)
  def tier_for(_a, _b), do: :erlang.nif_error(:nif_not_loaded)
  def viewer(_a, _b), do: :erlang.nif_error(:nif_not_loaded)
  def relationships(), do: :erlang.nif_error(:nif_not_loaded)
  def classify(_a, _b), do: :erlang.nif_error(:nif_not_loaded)

  # OpenAgentsPolicy.fingerprint/0
  def decision_digest(), do: :erlang.nif_error(:nif_not_loaded)
  def decision_json(), do: :erlang.nif_error(:nif_not_loaded)
  def sha256(_a), do: :erlang.nif_error(:nif_not_loaded)

  # The calls that may go dirty (run on a dirty CPU scheduler instead of a
  # normal one). Each is two NIFs: `_normal`, on a normal scheduler, and
  # `_dirty`, the same function on a dirty CPU one. The function of the plain
  # name, below, chooses, and is the only place that does: a call whose read
  # arguments are `OpenAgentsPolicy.Scheduler.dirty?/1` (a binary past
  # `dirty_read_bytes/0`) goes to `_dirty` without `_normal` reading it; and
  # a call that compares account ids (`answers_dirty?`) may have `_normal`
  # answer `:dirty`, having compared nothing, for ids too large to compare
  # there (the NIF crate's `decode::DIRTY_COMPARE_BYTES`), and is then made
  # again on `_dirty`.
  on_either_scheduler = [
    # {name, arguments, the arguments read (those a NIF reads as a binary;
    # `revoked_at` is only told from nil), answers_dirty?}
    {:fields_at, [:family, :tier, :user_admin], [:tier], false},
    {:project, [:family, :source, :tier, :user_admin], [:tier], false},
    {:link_for_attempt, [:repository, :kind, :id, :authority], [:kind], false},
    {:ladder_name, [:tier], [:tier], false},
    {:ladder_rank, [:tier], [:tier], false},
    {:ladder_viewer_tier, [:viewer, :user_admin], [:viewer], false},
    {:ladder_clamp, [:tier, :viewer, :user_admin], [:tier, :viewer], false},
    {:effective_tier, [:link, :tier, :viewer, :user_admin], [:link, :tier, :viewer], true},
    {:linked_tier, [:owner, :tier, :revoked_at, :viewer, :user_admin], [:owner, :tier, :viewer],
     true},
    {:ladder_effective_tier, [:subject, :viewer, :user_admin], [:subject, :viewer], true},
    {:ladder_allows, [:subject, :access, :viewer, :user_admin], [:subject, :viewer], true}
  ]

  for {name, arguments, read, answers_dirty?} <- on_either_scheduler do
    vars = Enum.map(arguments, &Macro.var(&1, __MODULE__))
    normal = :"#{name}_normal"
    dirty = :"#{name}_dirty"

    dirty? =
      read
      |> Enum.map(
        &quote(do: OpenAgentsPolicy.Scheduler.dirty?(unquote(Macro.var(&1, __MODULE__))))
      )
      |> Enum.reduce(&quote(do: unquote(&2) or unquote(&1)))

    on_normal =
      if answers_dirty?,
        do:
          quote(
            do:
              with(
                :dirty <- unquote(normal)(unquote_splicing(vars)),
                do: unquote(dirty)(unquote_splicing(vars))
              )
          ),
        else: quote(do: unquote(normal)(unquote_splicing(vars)))

    @doc false
    def unquote(name)(unquote_splicing(vars)) do
      if unquote(dirty?), do: unquote(dirty)(unquote_splicing(vars)), else: unquote(on_normal)
    end
  end

  def fields_at_normal(_a, _b, _c), do: :erlang.nif_error(:nif_not_loaded)
  def fields_at_dirty(_a, _b, _c), do: :erlang.nif_error(:nif_not_loaded)
  def project_normal(_a, _b, _c, _d), do: :erlang.nif_error(:nif_not_loaded)
  def project_dirty(_a, _b, _c, _d), do: :erlang.nif_error(:nif_not_loaded)
  def link_for_attempt_normal(_a, _b, _c, _d), do: :erlang.nif_error(:nif_not_loaded)
  def link_for_attempt_dirty(_a, _b, _c, _d), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_name_normal(_a), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_name_dirty(_a), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_rank_normal(_a), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_rank_dirty(_a), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_viewer_tier_normal(_a, _b), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_viewer_tier_dirty(_a, _b), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_clamp_normal(_a, _b, _c), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_clamp_dirty(_a, _b, _c), do: :erlang.nif_error(:nif_not_loaded)
  def effective_tier_normal(_a, _b, _c, _d), do: :erlang.nif_error(:nif_not_loaded)
  def effective_tier_dirty(_a, _b, _c, _d), do: :erlang.nif_error(:nif_not_loaded)
  def linked_tier_normal(_a, _b, _c, _d, _e), do: :erlang.nif_error(:nif_not_loaded)
  def linked_tier_dirty(_a, _b, _c, _d, _e), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_effective_tier_normal(_a, _b, _c), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_effective_tier_dirty(_a, _b, _c), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_allows_normal(_a, _b, _c, _d), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_allows_dirty(_a, _b, _c, _d), do: :erlang.nif_error(:nif_not_loaded)
end
