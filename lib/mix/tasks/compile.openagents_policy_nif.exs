defmodule Mix.Tasks.Compile.OpenagentsPolicyNif do
  @moduledoc """
  Installs the NIF library `openagents_policy_nif` where
  `OpenAgentsPolicy.Native` loads it from: a precompiled artifact, or a build
  of the Rust crate by cargo.

  The library carries its own compiler (no Hex dependency: neither `rustler`
  nor `rustler_precompiled`), following rustler_precompiled's conventions for
  artifact names, checksum files, target triples and environment variables.
  It runs before the Elixir compiler (see `:compilers` in mix.exs), because
  modules of the library call the NIF while they are being compiled.

  ## Where the library comes from, first match wins

    1. `OPENAGENTS_POLICY_NIF_PATH=/path/to/libopenagents_policy_nif.so`: that
       file, installed whenever its content differs from what is installed.
    2. A forced source build, `OPENAGENTS_POLICY_BUILD=1` or
       `RUSTLER_PRECOMPILED_FORCE_BUILD_ALL=1` (`true` also counts): cargo.
    3. The precompiled artifact for this VM's target triple and NIF version,
       when `checksum-Elixir.OpenAgentsPolicy.Native.exs` in the project root
       lists it. The package carries that file; a checkout of the repository
       does not, so a checkout builds from source. The artifact is fetched
       from the base URL (`OPENAGENTS_POLICY_NIF_BASE_URL`, else
       `config :openagents_policy, nif_base_url: ...`, else the package's own)
       with OTP's `:httpc` (proxies, a CA bundle, retries: guides/releases.md,
       "Downloads"), kept in the
       cache directory (`RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH`, else
       `:filename.basedir(:user_cache, "openagents_policy")`), and its SHA-256
       is checked against the checksum file before it is extracted, on every
       cache hit too. The checksum file is read as data, never evaluated.
    4. cargo, when it is on PATH: `cargo rustc --locked -p openagents_policy_nif
       --lib --release` (`OPENAGENTS_POLICY_NIF_PROFILE=debug` for a debug
       build). Cargo decides what is stale, and its own settings apply
       (`CARGO_TARGET_DIR`, `.cargo/config.toml`, ...): the library's path is
       taken from cargo's report of the cdylib, never guessed. `--locked`
       refuses to rewrite `Cargo.lock`.
    5. Otherwise, an error that names every option above.

  A refusal on the precompiled path (an artifact whose digest differs, one
  the checksum file does not list, a download that fails, a target with no
  artifact and no cargo) fails the compile with the file, the expected and
  actual digests and the way out, and installs nothing. A precompiled
  library that fails its load check (below) is not a refusal of the
  artifact but of the build for this machine: with cargo on PATH the
  library is built from source instead, and the compile says so; without
  cargo it fails with the loader's error and the way out, installing
  nothing.

  ## What is installed

  The library is installed as `priv/native/libopenagents_policy_nif-<digest>.so`
  under `Mix.Project.app_path/0`, named by its content (SHA-256). When a file
  of that name is there with that content, nothing is done, so a no-op
  compile recompiles no Elixir module; a file of that name whose content
  differs (damaged on disk) is replaced. A new library is loaded by a
  separate VM first (under a time limit, so a wrong-architecture or corrupt
  file fails here within seconds with the loader's error); then every other
  build in `priv/native` is deleted and `OpenAgentsPolicy.Native`, which
  names the installed file as an `@external_resource`, recompiles and loads
  it: a new path, so a running VM (`recompile()`, Phoenix's code reloader)
  loads the new code.

  ## Two compiles at once, two checkouts

  A compile holds a lock on the build (`nif.lock` beside Mix's manifests;
  one left by a killed compile is taken over), and every temporary file and
  load-check directory is named by the run, so two compiles of one checkout
  (an editor's and a terminal's) run one after the other. Cargo names a
  cdylib without a hash, so two checkouts sharing a target directory share
  one `libopenagents_policy_nif.so`, and cargo calls a checkout's build fresh
  although the file is the other's. So on Linux each build carries a mark of
  its checkout (its ELF build-id is a digest of the checkout's path, passed
  to the linker); a library without this checkout's mark is not installed:
  the checkout's NIF crate is rebuilt (its `lib.rs` touched) instead.

  The source tree must not have a `priv/` directory: Mix would link it into
  the build over the installed library.

  ## Where each job lives

  This task only takes the lock, asks for a NIF library and installs it
  when it is not installed already. Each job is a module of its own under
  `lib/mix/openagents_policy/`, `.exs` scripts loaded with this one by
  mix.exs (they must exist before the library's Elixir is compiled, and may
  use no Hex dependency):

    * `Mix.OpenAgentsPolicy.Source` (`source.exs`): which source, first
      match wins, and the ways out every refusal prints;
    * `Mix.OpenAgentsPolicy.Precompiled` (`precompiled.exs`): the checksum
      file, the cache, the download and the extraction, with
      `Mix.OpenAgentsPolicy.Target` (`target.exs`), the target triple, and
      `Mix.OpenAgentsPolicy.Download` (`download.exs`), the transfer, which
      `Mix.OpenAgentsPolicy.Network` (`network.exs`) routes: proxy, TLS,
      plain http;
    * `Mix.OpenAgentsPolicy.Cargo` (`cargo.exs`): running cargo, the
      checkout mark, and `Mix.OpenAgentsPolicy.CargoJSON` (`cargo_json.exs`)
      for its messages;
    * `Mix.OpenAgentsPolicy.Install` (`install.exs`): the install and its
      load check, `OpenAgentsPolicy.LoadCheck` (a module of the library,
      shared with `OpenAgentsPolicy.Upgrade`), with
      `Mix.OpenAgentsPolicy.Describe` (`describe.exs`) for what a file that
      does not load is;
    * `Mix.OpenAgentsPolicy.Lock` (`lock.exs`): the lock;
    * `Mix.OpenAgentsPolicy.Cache` (`cache.exs`): the cache directory, and
      files written where no other user can plant or follow them.
  """
  use Mix.Task.Compiler

  alias Mix.OpenAgentsPolicy.{Install, Lock, Source}

  @crate "openagents_policy_nif"
  @native "priv/native"

  @impl true
  def run(args) do
    root = Path.dirname(Mix.Project.project_file())
    dir = Path.join(Mix.Project.app_path(), @native)
    build = Path.dirname(manifest())
    # Names this run's temporary files and directories.
    run_id = "#{System.pid()}-#{System.unique_integer([:positive])}"
    work = Path.join(build, "nif_work-#{run_id}")

    Lock.with_lock(Path.join(build, "nif.lock"), fn ->
      try do
        {origin, library} = Source.produce(root, work)

        case Install.install!(origin, library, dir, root, work, "--force" in args) do
          {:ok, origin, installed} ->
            File.mkdir_p!(build)
            File.write!(manifest(), :erlang.term_to_binary({origin, Path.basename(installed)}))
            {:ok, []}

          :noop ->
            {:noop, []}
        end
      after
        File.rm_rf(work)
      end
    end)
  end

  @impl true
  def manifests, do: [manifest()]

  @impl true
  def clean do
    priv = Path.join(Mix.Project.app_path(), "priv")
    File.rm_rf!(Path.join(priv, "native"))
    File.rmdir(priv)
    File.rm(manifest())
    :ok
  end

  defp manifest, do: Path.join(Mix.Project.manifest_path(), "compile.#{@crate}")

  @doc false
  @spec crate() :: String.t()
  def crate, do: @crate

  # Helpers for the job modules.

  @doc false
  @spec sha256(binary()) :: String.t()
  def sha256(data) do
    ensure_otp_apps([:crypto])
    :crypto.hash(:sha256, data) |> Base.encode16(case: :lower)
  end

  # Mix 1.15 and later keep OTP applications that are no dependency of the
  # project off the code path while compiling a dependency; these come back
  # on it here (1.14 never takes them off).
  @doc false
  @spec ensure_otp_apps([atom()]) :: :ok
  def ensure_otp_apps(apps) do
    if function_exported?(Mix, :ensure_application!, 1),
      do: Enum.each(apps, &apply(Mix, :ensure_application!, [&1]))

    :ok
  end
end
