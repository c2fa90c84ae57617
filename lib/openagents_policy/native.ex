defmodule OpenAgentsPolicy.Native do
  @moduledoc false
  # The NIF library from rustler_precompiled (guides/releases.md), checked
  # against the package's checksum file; or built by rustler (`force_build`)
  # in a checkout (no checksum file), with OPENAGENTS_POLICY_BUILD=1, or with
  # rustler_precompiled's own settings, which it reads. Demo: dev/demo/.
  alias OpenAgentsPolicy.Native.{BaseURL, Cargo}

  version = Mix.Project.config()[:version]
  checkout? = not File.regular?(Path.expand("../../checksum-#{__MODULE__}.exs", __DIR__))
  release = "https://github.com/OpenAgentsInc/openagents_policy/releases/download/v#{version}"

  use RustlerPrecompiled,
      [
        otp_app: :openagents_policy,
        crate: "openagents_policy_nif",
        version: version,
        # The variable as users write a mirror's address (native/base_url.ex).
        base_url: BaseURL.option(System.get_env("OPENAGENTS_POLICY_NIF_BASE_URL"), release),
        force_build: System.get_env("OPENAGENTS_POLICY_BUILD") in ["1", "true"] or checkout?,
        targets: ~w(aarch64-apple-darwin aarch64-unknown-linux-gnu aarch64-unknown-linux-musl
                    x86_64-apple-darwin x86_64-unknown-linux-gnu x86_64-unknown-linux-musl),
        nif_versions: ["2.15"]
      ] ++ Cargo.rustler_0_36_target_dir(Path.expand("../..", __DIR__))

  # The library loaded, `{otp_app, path}` without `.so`, as rustler_precompiled
  # names it, or rustler for a source build. `OpenAgentsPolicy.fingerprint/0` reads it.
  {app, path} = Module.get_attribute(__MODULE__, :rustler_precompiled_load_from) || @load_from
  def library_file, do: Application.app_dir(unquote(app), unquote(path <> ".so"))

  # The NIFs, named as the public functions they serve (guides/rust.md).
  # Target (lib/openagents/delegations/target.ex)
  def lifecycles, do: err()
  def delegation_lifecycles, do: err()
  def job_terminal_statuses, do: err()
  def custodies, do: err()
  def kinds, do: err()
  def custody(_a), do: err()
  def runtime_class(_a), do: err()
  def box_lifecycle(_a), do: err()
  def run_lifecycle(_a), do: err()
  def job_lifecycle(_a), do: err()
  def computer_lifecycle(_a, _b, _c), do: err()
  def seam(_a, _b, _c), do: err()
  def delegation_seam(_a), do: err()
  def substrates, do: err()
  def machine_statuses, do: err()
  def unrecognized_lifecycles, do: err()
  def field_columns(_a), do: err()
  # WorkDisclosure and the ladder
  def families, do: err()
  def tiers, do: err()
  def schedule, do: err()
  def schedule_json, do: err()
  def never(_a), do: err()
  def source_columns(_a), do: err()
  def tier_for(_a, _b), do: err()
  def viewer(_a, _b), do: err()
  def relationships, do: err()
  def classify(_a, _b), do: err()
  # OpenAgentsPolicy.fingerprint/0
  def decision_digest, do: err()
  def decision_json, do: err()
  # OpenAgentsPolicy.Decisions.diff/3 (always dirty: native/openagents_policy_nif/src/diff.rs)
  def decisions_diff(_a, _b, _format), do: err()

  # Calls that may go dirty: NIFs `_normal` (normal scheduler) and `_dirty`
  # (dirty CPU), and the plain name, the one place that chooses: `_dirty` when
  # an argument `read` as a binary is `OpenAgentsPolicy.Scheduler.dirty?/1`,
  # else `_normal`, which with `answers_dirty?` may answer `:dirty` for account
  # ids too long to compare there (`decode::DIRTY_COMPARE_BYTES`): then
  # `_dirty`. {name, arguments, read (not `revoked_at`: nil or not), answers_dirty?}
  on_either_scheduler = [
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
    var = &Macro.var(&1, __MODULE__)
    {args, unused} = {Enum.map(arguments, var), Enum.map(arguments, &var.(:"_#{&1}"))}
    normal = quote(do: unquote(:"#{name}_normal")(unquote_splicing(args)))
    dirty = quote(do: unquote(:"#{name}_dirty")(unquote_splicing(args)))

    retried = quote(do: with(:dirty <- unquote(normal), do: unquote(dirty)))
    on_normal = if answers_dirty?, do: retried, else: normal
    checks = Enum.map(read, &quote(do: OpenAgentsPolicy.Scheduler.dirty?(unquote(var.(&1)))))
    dirty? = Enum.reduce(checks, &quote(do: unquote(&2) or unquote(&1)))

    def unquote(name)(unquote_splicing(args)),
      do: if(unquote(dirty?), do: unquote(dirty), else: unquote(on_normal))

    def unquote(:"#{name}_normal")(unquote_splicing(unused)), do: err()
    def unquote(:"#{name}_dirty")(unquote_splicing(unused)), do: err()
  end

  defp err, do: :erlang.nif_error(:nif_not_loaded)
end
