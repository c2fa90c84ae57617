defmodule OpenAgentsPolicy.Native do
  @moduledoc false
  # Entry points of the Rust NIF library `openagents_policy_nif`, which
  # `mix compile` builds into priv/native (see the compile.openagents_policy_nif
  # task). The library is loaded when this module is loaded, including while
  # the rest of this library is being compiled.

  @on_load :load_nif
  @lib "priv/native/libopenagents_policy_nif"

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

  # The installed library file. Modules that read vocabularies from the NIF
  # while they compile name it as an @external_resource, so Mix recompiles
  # them when the library is rebuilt.
  @doc false
  def library_file, do: nif_path() <> ".so"

  # The app's priv dir, found through the code path. If the code path entry
  # is not named after the app (e.g. `erl -pa some/ebin`), the priv dir next
  # to this module's .beam.
  defp nif_path do
    Application.app_dir(:openagents_policy, @lib)
  rescue
    ArgumentError ->
      case :code.which(__MODULE__) do
        beam when is_list(beam) -> Path.expand(Path.join(["..", "..", @lib]), beam)
        _ -> @lib
      end
  end

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
  def effective_tier(_a, _b, _c, _d), do: :erlang.nif_error(:nif_not_loaded)
  def linked_tier(_a, _b, _c, _d, _e), do: :erlang.nif_error(:nif_not_loaded)
  def viewer(_a, _b), do: :erlang.nif_error(:nif_not_loaded)
  def relationships(), do: :erlang.nif_error(:nif_not_loaded)
  def attempt_link(_a, _b, _c, _d), do: :erlang.nif_error(:nif_not_loaded)
  def classify(_a, _b), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_name(_a), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_rank(_a), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_viewer_tier(_a, _b), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_clamp(_a, _b, _c), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_effective_tier(_a, _b, _c), do: :erlang.nif_error(:nif_not_loaded)
  def ladder_allows(_a, _b, _c, _d), do: :erlang.nif_error(:nif_not_loaded)
end
