defmodule OpenAgentsPolicy.Native do
  @moduledoc false
  # The NIF library from rustler_precompiled (guides/releases.md), checked against
  # the checksum file; or built by rustler (`force_build`) in a checkout, with
  # OPENAGENTS_POLICY_BUILD=1, or rustler_precompiled's own settings. Demo: dev/demo/.
  # Its load data is priv/decisions.json's SHA-256, which its rules must digest to.
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

  # The library loaded (`{otp_app, path}`, no `.so`), that fingerprint/0 reads.
  {app, path} = Module.get_attribute(__MODULE__, :rustler_precompiled_load_from) || @load_from
  def library_file, do: Application.app_dir(unquote(app), unquote(path <> ".so"))

  # The NIFs by arity, named as the functions they serve, taking Boundary's typed terms.
  for {arity, names} <- [
        {0, ~w(lifecycles delegation_lifecycles job_terminal_statuses custodies kinds substrates
               machine_statuses unrecognized_lifecycles families tiers schedule schedule_json
               relationships decision_digest decision_json)a},
        {1, ~w(custody runtime_class box_lifecycle run_lifecycle job_lifecycle delegation_seam
               never field_columns reasons source_columns ladder_name ladder_rank
               ladder_viewer_tier)a},
        {2, ~w(tier_for fields_at effective_tier viewer classify ladder_clamp
               ladder_effective_tier)a},
        {3, ~w(computer_lifecycle seam ladder_allows decisions_diff)a},
        {4, ~w(link_for_attempt)a}
      ],
      name <- names do
    def unquote(name)(unquote_splicing(Macro.generate_arguments(arity, __MODULE__))), do: err()
  end

  defp err, do: :erlang.nif_error(:nif_not_loaded)
end
