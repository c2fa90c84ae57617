defmodule OpenAgentsPolicy.Native do
  @moduledoc false
  # The NIF library `openagents_policy_nif`, delivered as the ecosystem
  # delivers NIFs (guides/releases.md):
  #
  #   * rustler_precompiled downloads (or takes from its cache) the artifact
  #     for this machine and checks it against the checksum file, when the
  #     package carries one (a Hex install, or a package directory taken by
  #     `path:`);
  #   * rustler builds it from the crate with cargo (`force_build`) in a
  #     checkout, which carries no checksum file, and wherever
  #     OPENAGENTS_POLICY_BUILD=1 (or rustler_precompiled's own
  #     `force_build` settings) asks for it. The host then needs `:rustler`
  #     among its dependencies, as rustler_precompiled documents.
  #
  # `make demo` (MIX_ENV=demo, no dependencies at all: no Hex) compiles a
  # stand-in for rustler_precompiled (dev/demo/) that loads the library
  # cargo built into priv/native.

  version = Mix.Project.config()[:version]
  root = Path.expand("../..", __DIR__)
  checksums = Path.join(root, "checksum-#{__MODULE__}.exs")

  # A source build wherever rustler_precompiled will ask rustler for one:
  # its own settings (below, as it reads them), OPENAGENTS_POLICY_BUILD=1, or
  # a directory without the checksum file (a checkout).
  force_build? =
    System.get_env("OPENAGENTS_POLICY_BUILD") in ["1", "true"] or
      System.get_env("RUSTLER_PRECOMPILED_FORCE_BUILD_ALL") in ["1", "true"] or
      Application.compile_env(:rustler_precompiled, :force_build_all, false) == true or
      Application.compile_env(:rustler_precompiled, [:force_build, :openagents_policy]) == true or
      not File.regular?(checksums)

  # A source build goes where cargo itself would put it (CARGO_TARGET_DIR,
  # CARGO_BUILD_TARGET_DIR, .cargo/config.toml, else the workspace's
  # target/), so every Mix env of a checkout and `cargo test` share one
  # build. rustler 0.37 and later leave that to cargo; 0.36 (the one Elixir
  # 1.14 runs) builds under _build, one directory per Mix env, unless it is
  # given `target_dir`, which later versions no longer take.
  rustler_opts =
    with true <- force_build?,
         true <- Code.ensure_loaded?(Jason),
         _ <- Application.load(:rustler),
         rustler when is_list(rustler) <- Application.spec(:rustler, :vsn),
         :lt <- Version.compare(to_string(rustler), "0.37.0"),
         {json, 0} <- System.cmd("cargo", ~w(metadata --format-version=1 --no-deps), cd: root) do
      [target_dir: Map.fetch!(apply(Jason, :decode!, [json]), "target_directory")]
    else
      _ -> []
    end

  use RustlerPrecompiled,
      [
        otp_app: :openagents_policy,
        crate: "openagents_policy_nif",
        version: version,
        # The variable as users write a mirror's address, refused in the
        # library's words when it is not one (native/base_url.ex).
        base_url:
          OpenAgentsPolicy.Native.BaseURL.option(
            System.get_env("OPENAGENTS_POLICY_NIF_BASE_URL"),
            "https://github.com/OpenAgentsInc/openagents_policy/releases/download/v#{version}"
          ),
        targets: ~w(aarch64-apple-darwin aarch64-unknown-linux-gnu aarch64-unknown-linux-musl
                    x86_64-apple-darwin x86_64-unknown-linux-gnu x86_64-unknown-linux-musl),
        nif_versions: ["2.15"]
      ] ++ if(force_build?, do: [force_build: true] ++ rustler_opts, else: [])

  # The library just installed: rustler and rustler_precompiled each write
  # theirs into priv/native as this module compiles, so it is the newest
  # file there (`OpenAgentsPolicy.fingerprint/0` reads it). rustler names it
  # `libopenagents_policy_nif.so` up to 0.36, `openagents_policy_nif.so`
  # from 0.37; rustler_precompiled by version, NIF version and target.
  installed =
    Mix.Project.app_path()
    |> Path.join("priv/native/*openagents_policy_nif*.so")
    |> Path.wildcard()

  if installed == [], do: raise("no NIF library in #{Mix.Project.app_path()}/priv/native")

  @library installed
           |> Enum.max_by(&File.stat!(&1, time: :posix).mtime)
           |> Path.relative_to(Mix.Project.app_path())

  # The library file this module loaded (see @library).
  @doc false
  def library_file, do: Application.app_dir(:openagents_policy, @library)

  # A module whose tables are computed from the core as it compiles says so
  # with `use OpenAgentsPolicy.Native`: a release's appup loads it right after
  # this module (the attribute, persisted in its beam, which the
  # :openagents_policy_appup compiler reads), so tables and NIF never come
  # from two builds. Mix recompiles it whenever this module is recompiled (a
  # compile-time dependency).
  @doc false
  defmacro __using__(_opts) do
    quote do
      Module.register_attribute(__MODULE__, :openagents_policy_tables, persist: true)
      @openagents_policy_tables true
    end
  end

  # The NIFs, named as the public functions they serve (guides/rust.md has
  # the table of names). rustler registers each; a stub raises until the
  # library is loaded.

  # Target (lib/openagents/delegations/target.ex)
  def lifecycles(), do: :erlang.nif_error(:nif_not_loaded)
  def delegation_lifecycles(), do: :erlang.nif_error(:nif_not_loaded)
  def job_terminal_statuses(), do: :erlang.nif_error(:nif_not_loaded)
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

  # OpenAgentsPolicy.Decisions.diff/3 (always dirty: native/openagents_policy_nif/src/diff.rs)
  def decisions_diff(_a, _b, _format), do: :erlang.nif_error(:nif_not_loaded)

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
