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

  # The library this module loads. Modules that read vocabularies from the
  # NIF while they compile name it as an @external_resource, so Mix
  # recompiles them when a new build replaces it.
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
  def fields_at(_a, _b, _c), do: :erlang.nif_error(:nif_not_loaded)
  def project(_a, _b, _c, _d), do: :erlang.nif_error(:nif_not_loaded)
  def viewer(_a, _b), do: :erlang.nif_error(:nif_not_loaded)
  def relationships(), do: :erlang.nif_error(:nif_not_loaded)
  def link_for_attempt(_a, _b, _c, _d), do: :erlang.nif_error(:nif_not_loaded)
  def classify(_a, _b), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_name(_a), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_rank(_a), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_viewer_tier(_a, _b), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_clamp(_a, _b, _c), do: :erlang.nif_error(:nif_not_loaded)

  # The calls that compare account ids. Each answers on a normal scheduler
  # unless that meant comparing ids too large to compare there (a binary past
  # 256 KiB, an integer past 64 bits, a list, tuple or map); then its
  # `_normal` NIF answers `:dirty`, having compared nothing, and the same call
  # is made on its `_dirty` twin, which runs on a dirty CPU scheduler.
  @doc false
  def effective_tier(link, tier, viewer, user_admin) do
    with :dirty <- effective_tier_normal(link, tier, viewer, user_admin),
         do: effective_tier_dirty(link, tier, viewer, user_admin)
  end

  @doc false
  def linked_tier(owner, tier, revoked_at, viewer, user_admin) do
    with :dirty <- linked_tier_normal(owner, tier, revoked_at, viewer, user_admin),
         do: linked_tier_dirty(owner, tier, revoked_at, viewer, user_admin)
  end

  @doc false
  def ladder_effective_tier(subject, viewer, user_admin) do
    with :dirty <- ladder_effective_tier_normal(subject, viewer, user_admin),
         do: ladder_effective_tier_dirty(subject, viewer, user_admin)
  end

  @doc false
  def ladder_allows(subject, access, viewer, user_admin) do
    with :dirty <- ladder_allows_normal(subject, access, viewer, user_admin),
         do: ladder_allows_dirty(subject, access, viewer, user_admin)
  end

  def effective_tier_normal(_a, _b, _c, _d), do: :erlang.nif_error(:nif_not_loaded)
  def effective_tier_dirty(_a, _b, _c, _d), do: :erlang.nif_error(:nif_not_loaded)
  def linked_tier_normal(_a, _b, _c, _d, _e), do: :erlang.nif_error(:nif_not_loaded)
  def linked_tier_dirty(_a, _b, _c, _d, _e), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_effective_tier_normal(_a, _b, _c), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_effective_tier_dirty(_a, _b, _c), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_allows_normal(_a, _b, _c, _d), do: :erlang.nif_error(:nif_not_loaded)

  # Dirty twins of the calls that read a binary argument: the same NIF on a
  # dirty CPU scheduler, for an argument holding a binary too large to read on
  # a normal one (OpenAgentsPolicy.Scheduler decides, before the call).
  def computer_lifecycle_dirty(_a, _b, _c), do: :erlang.nif_error(:nif_not_loaded)
  def fields_at_dirty(_a, _b, _c), do: :erlang.nif_error(:nif_not_loaded)
  def project_dirty(_a, _b, _c, _d), do: :erlang.nif_error(:nif_not_loaded)
  def link_for_attempt_dirty(_a, _b, _c, _d), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_name_dirty(_a), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_rank_dirty(_a), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_viewer_tier_dirty(_a, _b), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_clamp_dirty(_a, _b, _c), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_allows_dirty(_a, _b, _c, _d), do: :erlang.nif_error(:nif_not_loaded)
end
