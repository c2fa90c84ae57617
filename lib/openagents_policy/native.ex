defmodule OpenAgentsPolicy.Native do
  @moduledoc false
  # The NIF library from rustler_precompiled (guides/releases.md), checked
  # against the package's checksum file; or built by rustler (`force_build`)
  # in a checkout, with OPENAGENTS_POLICY_BUILD=1, or with rustler_precompiled's
  # own settings. Demo: dev/demo/. Its load data is priv/decisions.json's
  # SHA-256, which its rules must digest to (nif/src/document.rs).
  alias OpenAgentsPolicy.Native.{BaseURL, Cargo}

  version = Mix.Project.config()[:version]
  checkout? = not File.regular?(Path.expand("../../checksum-#{__MODULE__}.exs", __DIR__))
  force_build = System.get_env("OPENAGENTS_POLICY_BUILD") in ["1", "true"] or checkout?
  decisions = Path.expand("../../priv/decisions.json", __DIR__)
  @external_resource decisions
  digest = Base.encode16(:crypto.hash(:sha256, File.read!(decisions)), case: :lower)
  release = "https://github.com/OpenAgentsInc/openagents_policy/releases/download/v#{version}"

  use RustlerPrecompiled,
      [
        otp_app: :openagents_policy,
        crate: "openagents_policy_nif",
        version: version,
        # The variable as users write a mirror's address (native/base_url.ex).
        base_url: BaseURL.option(System.get_env("OPENAGENTS_POLICY_NIF_BASE_URL"), release),
        force_build: force_build,
        targets: ~w(aarch64-apple-darwin aarch64-unknown-linux-gnu aarch64-unknown-linux-musl
                    x86_64-apple-darwin x86_64-unknown-linux-gnu x86_64-unknown-linux-musl),
        nif_versions: ["2.15"],
        load_data: digest
      ] ++ if(force_build, do: Cargo.source_build(Path.expand("../..", __DIR__)), else: [])

  # The library loaded, `{otp_app, path}` without `.so`, as rustler_precompiled
  # names it, or rustler for a source build. `OpenAgentsPolicy.fingerprint/0` reads it.
  {app, path} = Module.get_attribute(__MODULE__, :rustler_precompiled_load_from) || @load_from
  def library_file, do: Application.app_dir(unquote(app), unquote(path <> ".so"))

  # The NIFs, named as the public functions they serve (guides/rust.md),
  # taking the typed terms OpenAgentsPolicy.Host makes.
  # Target (lib/openagents/delegations/target.ex)
  def lifecycles, do: err()
  def delegation_lifecycles, do: err()
  def job_terminal_statuses, do: err()
  def custodies, do: err()
  def kinds, do: err()
  def custody(_kind), do: err()
  def runtime_class(_kind), do: err()
  def box_lifecycle(_state), do: err()
  def run_lifecycle(_state), do: err()
  def job_lifecycle(_status), do: err()
  def computer_lifecycle(_status, _revoked_at, _online?), do: err()
  def seam(_kind, _lifecycle, _authorized?), do: err()
  def delegation_seam(_lifecycle), do: err()
  def substrates, do: err()
  def machine_statuses, do: err()
  def unrecognized_lifecycles, do: err()
  def field_columns(_family), do: err()
  # WorkDisclosure
  def families, do: err()
  def tiers, do: err()
  def schedule, do: err()
  def schedule_json, do: err()
  def never(_family), do: err()
  def reasons(_family), do: err()
  def source_columns(_family), do: err()
  def tier_for(_family, _field), do: err()
  def fields_at(_family, _viewer), do: err()
  def effective_tier(_record, _viewer), do: err()
  def viewer(_relationship, _account), do: err()
  def relationships, do: err()
  def link_for_attempt(_repository, _kind, _id, _authority), do: err()
  def classify(_family, _columns), do: err()
  # Ladder
  def ladder_name(_tier), do: err()
  def ladder_rank(_tier), do: err()
  def ladder_viewer_tier(_viewer), do: err()
  def ladder_clamp(_tier, _viewer), do: err()
  def ladder_effective_tier(_subject, _viewer), do: err()
  def ladder_allows(_subject, _access, _viewer), do: err()
  # OpenAgentsPolicy.fingerprint/0, OpenAgentsPolicy.Decisions.diff/3
  def decision_digest, do: err()
  def decision_json, do: err()
  def decisions_diff(_old, _new, _format), do: err()

  defp err, do: :erlang.nif_error(:nif_not_loaded)
end
