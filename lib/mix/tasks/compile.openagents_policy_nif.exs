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
       with OTP's `:httpc` (TLS verified against OTP's CA store), kept in the
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
  actual digests and the way out, and installs nothing.

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
  """
  use Mix.Task.Compiler

  @crate "openagents_policy_nif"
  @native "priv/native"
  @checksum_file "checksum-Elixir.OpenAgentsPolicy.Native.exs"
  @check_timeout 30_000
  @lock_wait 600_000
  @machines %{
    3 => "x86",
    8 => "mips",
    20 => "ppc",
    21 => "ppc64",
    22 => "s390x",
    40 => "arm",
    62 => "x86_64",
    183 => "aarch64",
    243 => "riscv"
  }
  @escapes %{?n => "\n", ?t => "\t", ?r => "\r", ?b => "\b", ?f => "\f"}

  @impl true
  def run(args) do
    root = Path.dirname(Mix.Project.project_file())
    dir = Path.join(Mix.Project.app_path(), @native)
    # Names this run's temporary files and directories.
    run_id = "#{System.pid()}-#{System.unique_integer([:positive])}"
    work = Path.join(Path.dirname(manifest()), "nif_work-#{run_id}")

    with_lock(fn ->
      try do
        {origin, artifact} = produce(root, work)
        digest = sha256(File.read!(artifact))
        installed = Path.join(dir, "lib#{@crate}-#{binary_part(digest, 0, 16)}.so")

        if "--force" in args or not installed?(installed, digest) do
          install!(origin, artifact, installed, root, work)
          {:ok, []}
        else
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

  defp sha256(data) do
    ensure_otp_apps([:crypto])
    :crypto.hash(:sha256, data) |> Base.encode16(case: :lower)
  end

  # Mix 1.15 and later keep OTP applications that are no dependency of the
  # project off the code path while compiling a dependency; these come back
  # on it here (1.14 never takes them off).
  defp ensure_otp_apps(apps) do
    if function_exported?(Mix, :ensure_application!, 1),
      do: Enum.each(apps, &apply(Mix, :ensure_application!, [&1]))
  end

  # Installed means: the file is there and holds these bytes.
  defp installed?(installed, digest) do
    case File.read(installed) do
      {:ok, data} -> sha256(data) == digest
      {:error, _} -> false
    end
  end

  ## The lock

  # A directory made atomically; its `owner` file names the OS process
  # holding it, so one left by a killed compile is taken over (renamed away
  # first, so that only one waiter takes it).
  defp with_lock(fun) do
    lock = Path.join(Path.dirname(manifest()), "nif.lock")
    File.mkdir_p!(Path.dirname(lock))
    acquire(lock, System.monotonic_time(:millisecond) + @lock_wait, false)

    try do
      fun.()
    after
      File.rm_rf(lock)
    end
  end

  defp acquire(lock, deadline, told?) do
    case File.mkdir(lock) do
      :ok ->
        File.write!(Path.join(lock, "owner"), System.pid())

      {:error, :eexist} ->
        owner = File.read(Path.join(lock, "owner"))

        cond do
          match?({:ok, _}, owner) and not alive?(elem(owner, 1)) ->
            stale = "#{lock}.stale-#{System.pid()}"
            if File.rename(lock, stale) == :ok, do: File.rm_rf(stale)
            acquire(lock, deadline, told?)

          System.monotonic_time(:millisecond) > deadline ->
            Mix.raise(
              "another compile has held #{lock} for #{div(@lock_wait, 1000)} s; " <>
                "if no compile is running, delete that directory"
            )

          true ->
            unless told?,
              do: Mix.shell().info("Waiting for another compile of the NIF (#{lock})")

            Process.sleep(100)
            acquire(lock, deadline, true)
        end

      {:error, reason} ->
        Mix.raise("cannot create the lock #{lock}: #{:file.format_error(reason)}")
    end
  end

  defp alive?(pid) do
    pid = String.trim(pid)

    cond do
      pid == "" -> true
      File.dir?("/proc/self") -> File.exists?("/proc/#{pid}")
      true -> match?({_, 0}, System.cmd("kill", ["-0", pid], stderr_to_stdout: true))
    end
  end

  ## Installing

  # Copies the library in under its own name, proves it loads, then deletes
  # every other build. A new library that does not load is removed again, so
  # the previous build stays current and the next compile tries again.
  defp install!(origin, artifact, installed, root, work) do
    dir = Path.dirname(installed)
    File.mkdir_p!(dir)
    tmp = Path.join(dir, ".#{Path.basename(work)}.tmp")

    case origin do
      {:prebuilt, _} -> Mix.shell().info("Installing prebuilt NIF #{artifact}")
      {:precompiled, url} -> Mix.shell().info("Installing precompiled NIF #{url}")
      _ -> :ok
    end

    # The load check runs on a copy in this run's work directory, so a
    # library that does not load never reaches priv/native.
    checked = Path.join([work, "check", Path.basename(installed)])
    File.mkdir_p!(Path.dirname(checked))
    File.cp!(artifact, checked)

    case check_loads(checked, root, work) do
      :ok ->
        # Copy then rename: never a half-written file under the final name.
        File.cp!(checked, tmp)
        File.rename!(tmp, installed)

      {:error, why} ->
        Mix.raise("""
        The NIF library #{describe_origin(origin, artifact)} cannot be loaded by this VM \
        (OTP #{System.otp_release()}, #{:erlang.system_info(:system_architecture)}):

            #{why}

        The file is #{describe(artifact)}.
        #{hint(origin)}\
        """)
    end

    # Under the lock, everything else here is a previous build or a file a
    # killed compile left behind.
    for file <- File.ls!(dir),
        Path.join(dir, file) != installed,
        do: File.rm_rf!(Path.join(dir, file))

    File.mkdir_p!(Path.dirname(manifest()))
    File.write!(manifest(), :erlang.term_to_binary({origin, Path.basename(installed)}))

    Mix.shell().info(
      "Installed NIF #{Path.basename(installed)} (from #{describe_origin(origin, artifact)})"
    )
  end

  defp describe_origin({:precompiled, url}, _artifact), do: url
  defp describe_origin(_origin, artifact), do: artifact

  defp hint({:prebuilt, _}),
    do: "OPENAGENTS_POLICY_NIF_PATH names it: point it at a library built for this machine."

  defp hint({:precompiled, _}),
    do:
      "It is the precompiled artifact for #{target_triple()}; build from source instead " <>
        "with OPENAGENTS_POLICY_BUILD=1 (needs cargo), or set OPENAGENTS_POLICY_NIF_PATH."

  defp hint({:cargo, _}),
    do: "It was built by cargo here; check the Rust toolchain's target and the NIF version."

  # What the file's header says it is: the loader's own message for a library
  # of another architecture is often just "No such file or directory".
  defp describe(file) do
    case File.open(file, [:read, :binary], &IO.binread(&1, 20)) do
      {:ok, <<0x7F, "ELF", class, endian, _::binary-12, machine::binary-2>>} ->
        machine =
          if endian == 2,
            do: :binary.decode_unsigned(machine),
            else: :binary.decode_unsigned(machine, :little)

        bits = if class == 2, do: "64-bit", else: "32-bit"
        "an ELF #{bits} file for #{Map.get(@machines, machine, "machine #{machine}")}"

      {:ok, <<magic::little-32, _::binary>>} when magic in [0xFEEDFACF, 0xFEEDFACE] ->
        "a Mach-O file"

      {:ok, _} ->
        "not a shared library (no ELF or Mach-O header)"

      {:error, reason} ->
        "unreadable (#{:file.format_error(reason)})"
    end
  end

  ## Where the library comes from

  defp produce(root, work) do
    cond do
      path = System.get_env("OPENAGENTS_POLICY_NIF_PATH") ->
        path = Path.expand(path)

        unless File.regular?(path) do
          Mix.raise("OPENAGENTS_POLICY_NIF_PATH is set to #{path}, which is not a file")
        end

        {{:prebuilt, path}, path}

      forced?() ->
        cargo_build!(root, :forced)

      true ->
        case precompiled(root) do
          {:ok, file, expected} ->
            fetch_precompiled!(root, file, expected, work)

          {:unavailable, why} ->
            cargo_build!(root, {:unavailable, why})
        end
    end
  end

  defp forced? do
    Enum.any?(
      ~w(OPENAGENTS_POLICY_BUILD RUSTLER_PRECOMPILED_FORCE_BUILD_ALL),
      &(System.get_env(&1) in ["1", "true"])
    )
  end

  defp profile do
    case System.get_env("OPENAGENTS_POLICY_NIF_PROFILE", "release") do
      profile when profile in ["release", "debug"] -> profile
      other -> Mix.raise("OPENAGENTS_POLICY_NIF_PROFILE must be release or debug, got: #{other}")
    end
  end

  ## The precompiled path

  # This VM's target triple, as rustler_precompiled reads it: from the
  # system architecture OTP reports (x86_64-pc-linux-gnu on Debian,
  # x86_64-alpine-linux-musl on Alpine, aarch64-apple-darwin23.4.0 on macOS),
  # with TARGET_ARCH, TARGET_VENDOR, TARGET_OS and TARGET_ABI overriding its
  # parts, and the vendors pc, redhat, suse and alpine read as unknown.
  @doc false
  def target_triple do
    parts = :erlang.system_info(:system_architecture) |> List.to_string() |> String.split("-")

    keys =
      case length(parts) do
        4 -> [:arch, :vendor, :os, :abi]
        3 -> [:arch, :vendor, :os]
        _ -> []
      end

    detected = keys |> Enum.zip(parts) |> Map.new()

    overridden =
      Enum.reduce(
        [arch: "TARGET_ARCH", vendor: "TARGET_VENDOR", os: "TARGET_OS", abi: "TARGET_ABI"],
        detected,
        fn
          {key, var}, acc ->
            case System.get_env(var) do
              nil -> acc
              value -> Map.put(acc, key, value)
            end
        end
      )

    # An override of other parts on Linux that left the vendor alone means
    # the vendor of the machine doing the build, not of the target.
    overridden =
      if overridden != detected and overridden[:vendor] == detected[:vendor] and
           overridden[:os] == "linux",
         do: Map.put(overridden, :vendor, "unknown"),
         else: overridden

    normalized =
      cond do
        (overridden[:os] || "") =~ "darwin" ->
          arch = if overridden[:arch] == "arm", do: "aarch64", else: overridden[:arch]
          %{overridden | arch: arch, os: "darwin"}

        (overridden[:os] || "") =~ "linux" ->
          arch = if overridden[:arch] == "amd64", do: "x86_64", else: overridden[:arch]

          vendor =
            if overridden[:vendor] in ~w(pc redhat suse alpine),
              do: "unknown",
              else: overridden[:vendor]

          %{overridden | arch: arch, vendor: vendor}

        true ->
          overridden
      end

    for(key <- [:arch, :vendor, :os, :abi], value = normalized[key], do: value) |> Enum.join("-")
  end

  # The artifact this VM takes, and its expected digest, when the checksum
  # file lists one: for this triple, the highest NIF version the file lists
  # that this VM loads (same major version, minor no higher than the VM's).
  defp precompiled(root) do
    path = Path.join(root, @checksum_file)

    if File.regular?(path) do
      checksums = read_checksums!(path)
      version = Mix.Project.config()[:version]
      triple = target_triple()
      [major, minor] = nif_version(List.to_string(:erlang.system_info(:nif_version)))
      prefix = "lib#{@crate}-v#{version}-nif-"
      suffix = "-#{triple}.so.tar.gz"

      candidates =
        for {file, digest} <- checksums,
            String.starts_with?(file, prefix) and String.ends_with?(file, suffix),
            nif = file |> String.replace_prefix(prefix, "") |> String.replace_suffix(suffix, ""),
            [^major, m] <- [nif_version(nif)],
            m <= minor,
            do: {m, file, digest}

      case Enum.max(candidates, fn -> nil end) do
        {_m, file, "sha256:" <> digest} ->
          {:ok, file, digest}

        nil ->
          {:unavailable,
           "#{@checksum_file} lists no artifact for target #{triple} and NIF version " <>
             "#{major}.#{minor} (expected a file named #{prefix}<2.15 to #{major}.#{minor}>#{suffix})"}
      end
    else
      {:unavailable, "there is no #{@checksum_file} (a checkout of the repository has none)"}
    end
  end

  defp nif_version(text) do
    case Regex.run(~r/^(\d+)\.(\d+)$/, text) do
      [_, major, minor] -> [String.to_integer(major), String.to_integer(minor)]
      nil -> [:none, :none]
    end
  end

  # The checksum file as data: one literal map of file name to
  # "sha256:<64 hex digits>", parsed and never evaluated.
  defp read_checksums!(path) do
    refuse = fn why ->
      Mix.raise("""
      #{path} is not a checksum file (#{why}): it must be a literal map of file
      name to "sha256:<hex>", as make precompiled writes it. Nothing was installed.
      #{ways_out()}
      """)
    end

    case Code.string_to_quoted(File.read!(path)) do
      {:ok, {:%{}, _, pairs}} ->
        Map.new(pairs, fn
          {file, "sha256:" <> hex = digest} when is_binary(file) ->
            if hex =~ ~r/^[0-9a-f]{64}$/,
              do: {file, digest},
              else: refuse.("bad digest for #{file}")

          other ->
            refuse.("unexpected entry #{Macro.to_string(other)}")
        end)

      {:ok, _other} ->
        refuse.("not a literal map")

      {:error, _} ->
        refuse.("not valid Elixir syntax")
    end
  end

  defp cache_dir do
    System.get_env("RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH") ||
      :filename.basedir(:user_cache, ~c"openagents_policy") |> List.to_string()
  end

  defp base_url do
    System.get_env("OPENAGENTS_POLICY_NIF_BASE_URL") ||
      Application.get_env(:openagents_policy, :nif_base_url) ||
      Mix.Project.config()[:nif_base_url] ||
      Mix.raise("no base URL for precompiled NIFs: set OPENAGENTS_POLICY_NIF_BASE_URL")
  end

  # The cached artifact when its digest is the expected one; else a fresh
  # download, checked before it is cached. Only then is the one library in
  # it extracted (in memory), into this run's work directory.
  defp fetch_precompiled!(_root, file, expected, work) do
    url = String.trim_trailing(base_url(), "/") <> "/" <> file
    cached = Path.join(cache_dir(), file)

    tar =
      with {:ok, data} <- File.read(cached),
           ^expected <- sha256(data) do
        data
      else
        other ->
          if is_binary(other) do
            Mix.shell().info(
              "The cached #{cached} has digest #{other}, not #{expected}: downloading it again"
            )

            File.rm(cached)
          end

          data = download!(url, file, expected)
          actual = sha256(data)

          if actual != expected do
            refuse!(file, """
            The downloaded artifact does not match the checksum file.
                url:      #{url}
                expected: sha256:#{expected}
                actual:   sha256:#{actual}
            """)
          end

          File.mkdir_p!(Path.dirname(cached))
          tmp = "#{cached}.#{Path.basename(work)}.tmp"
          File.write!(tmp, data)
          File.rename!(tmp, cached)
          data
      end

    library = String.replace_suffix(file, ".tar.gz", "")
    library_chars = String.to_charlist(library)

    case :erl_tar.extract({:binary, tar}, [:compressed, :memory]) do
      {:ok, [{name, content}]} when name == library or name == library_chars ->
        File.mkdir_p!(work)
        artifact = Path.join(work, library)
        File.write!(artifact, content)
        {{:precompiled, url}, artifact}

      other ->
        refuse!(
          file,
          "The artifact #{cached} does not hold the one file #{library}: #{inspect(other, limit: 5)}\n"
        )
    end
  end

  defp download!(url, file, expected) do
    Mix.shell().info("Downloading #{url}")
    ensure_otp_apps([:inets, :ssl, :public_key, :crypto, :asn1])
    {:ok, _} = Application.ensure_all_started(:inets)
    uri = URI.parse(url)

    ssl =
      if uri.scheme == "https" do
        {:ok, _} = Application.ensure_all_started(:ssl)

        [
          ssl: [
            verify: :verify_peer,
            cacerts: :public_key.cacerts_get(),
            depth: 4,
            server_name_indication: String.to_charlist(uri.host),
            customize_hostname_check: [
              match_fun: :public_key.pkix_verify_hostname_match_fun(:https)
            ]
          ]
        ]
      else
        []
      end

    options = [timeout: 120_000, connect_timeout: 20_000] ++ ssl

    case :httpc.request(:get, {String.to_charlist(url), []}, options, body_format: :binary) do
      {:ok, {{_, 200, _}, _headers, body}} ->
        body

      {:ok, {{_, status, reason}, _headers, _body}} ->
        refuse!(file, """
        Downloading it failed: HTTP #{status} #{reason}.
            url:      #{url}
            expected: sha256:#{expected}
            actual:   (nothing downloaded)
        """)

      {:error, reason} ->
        refuse!(file, """
        Downloading it failed: #{inspect(reason)}.
            url:      #{url}
            expected: sha256:#{expected}
            actual:   (nothing downloaded)
        A machine without network access builds from the cache directory
        (#{cache_dir()}, RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH) once it holds the file.
        """)
    end
  end

  defp refuse!(file, why) do
    Mix.raise("""
    The precompiled NIF #{file} was refused, and nothing was installed.
    #{why}\
    #{ways_out()}
    """)
  end

  defp ways_out do
    """
    Ways out:
      * build from source: OPENAGENTS_POLICY_BUILD=1 mix compile (needs cargo; \
    RUSTLER_PRECOMPILED_FORCE_BUILD_ALL=1 works too);
      * install a library you have: OPENAGENTS_POLICY_NIF_PATH=/path/to/lib#{@crate}.so mix compile;
      * fetch from elsewhere: OPENAGENTS_POLICY_NIF_BASE_URL=<url of the directory holding the artifacts>.\
    """
  end

  ## The source build

  # Runs cargo, streaming what it says for people (less its "Finished" line,
  # so a no-op compile stays silent), and returns the cdylib it reports,
  # checked to be this checkout's build.
  defp cargo_build!(root, why) do
    cargo = System.find_executable("cargo")

    if cargo == nil do
      Mix.raise("""
      The #{@crate} NIF cannot be installed for this machine (#{target_triple()}, \
      NIF #{:erlang.system_info(:nif_version)}):
        * OPENAGENTS_POLICY_NIF_PATH is not set;
        * #{why_not_precompiled(why)};
        * cargo was not found on PATH, so it cannot be built from source \
      (install Rust with rustup, https://rustup.rs).
      #{ways_out()}
      """)
    end

    profile = profile()
    mark = checkout_mark(root)
    artifact = run_cargo!(cargo, root, profile, mark)

    artifact =
      if mark == nil or marked?(artifact, mark) do
        artifact
      else
        # Cargo called this checkout's build fresh, but the file is another
        # checkout's (they share the target directory): build this one again.
        Mix.shell().info(
          "#{artifact} was built from another checkout: rebuilding it from #{root}"
        )

        File.touch!(Path.join(root, "native/#{@crate}/src/lib.rs"))
        artifact = run_cargo!(cargo, root, profile, mark)

        marked?(artifact, mark) ||
          Mix.raise("#{artifact} is still not built from #{root} after a rebuild")

        artifact
      end

    {{:cargo, profile}, artifact}
  end

  defp why_not_precompiled(:forced),
    do:
      "a source build is forced (OPENAGENTS_POLICY_BUILD or RUSTLER_PRECOMPILED_FORCE_BUILD_ALL)"

  defp why_not_precompiled({:unavailable, why}), do: "no precompiled artifact: #{why}"

  # The build-id this checkout's builds carry (16 bytes of the SHA-256 of
  # its real path); nil where the linker is not an ELF linker.
  defp checkout_mark(root) do
    if match?({:unix, :linux}, :os.type()) do
      real = root |> Path.expand() |> real_path()
      ensure_otp_apps([:crypto])
      :crypto.hash(:sha256, real) |> binary_part(0, 16)
    end
  end

  defp real_path(path) do
    case :file.read_link_all(String.to_charlist(path)) do
      {:ok, target} ->
        real_path(Path.expand(List.to_string(target), Path.dirname(path)))

      {:error, _} ->
        case Path.dirname(path) do
          ^path -> path
          parent -> Path.join(real_path(parent), Path.basename(path))
        end
    end
  end

  # Cargo names the units of a workspace by paths relative to its root, so
  # two checkouts sharing a target directory share every unit, fingerprints
  # included: a checkout's build can link the other's core crate. Cargo names
  # each unit's files by a hash that includes its rustflags, so rustc's
  # `-C metadata` with the checkout's digest, added to `build.rustflags` on
  # the command line (`--config`, which cargo merges with the configured
  # rustflags), gives each checkout units of its own.
  defp checkout_args(nil), do: []

  defp checkout_args(mark),
    do: [
      "--config",
      ~s(build.rustflags=["-C", "metadata=openagents-#{Base.encode16(mark, case: :lower)}"])
    ]

  # The GNU build-id note: namesz 4, descsz 16, type 3, "GNU\0", the mark.
  defp marked?(artifact, mark) do
    note = <<4::native-32, 16::native-32, 3::native-32, "GNU", 0, mark::binary>>
    :binary.match(File.read!(artifact), note) != :nomatch
  end

  defp run_cargo!(cargo, root, profile, mark) do
    args =
      ["rustc", "--locked", "-p", @crate, "--lib", "--message-format=json-render-diagnostics"] ++
        checkout_args(mark) ++
        if(profile == "release", do: ["--release"], else: []) ++
        if(mark,
          do: ["--", "-C", "link-arg=-Wl,--build-id=0x" <> Base.encode16(mark, case: :lower)],
          else: []
        )

    port =
      Port.open({:spawn_executable, cargo}, [
        :binary,
        :exit_status,
        :stderr_to_stdout,
        {:line, 65_536},
        args: args,
        cd: root
      ])

    {status, artifacts} = collect(port, "", [])

    if status != 0 do
      Mix.raise("""
      `cargo #{Enum.join(args, " ")}` failed with exit status #{status} (output above).
      If it says Cargo.lock needs to be updated, run `cargo update --workspace` in #{root}.
      To use a prebuilt library instead, set OPENAGENTS_POLICY_NIF_PATH.
      """)
    end

    case Enum.uniq(artifacts) do
      [file] ->
        file

      [] ->
        Mix.raise("cargo built #{@crate} but reported no cdylib for it")

      several ->
        Mix.raise(
          "cargo reported #{length(several)} cdylibs for #{@crate} (several build " <>
            "targets?), so which one to install is ambiguous: #{Enum.join(several, ", ")}"
        )
    end
  end

  defp collect(port, partial, artifacts) do
    receive do
      {^port, {:data, {:noeol, chunk}}} ->
        collect(port, partial <> chunk, artifacts)

      {^port, {:data, {:eol, chunk}}} ->
        collect(port, "", line(partial <> chunk, artifacts))

      {^port, {:exit_status, status}} ->
        {status, artifacts}
    end
  end

  # Cargo's JSON messages start with `{"reason":`; everything else is for
  # people.
  defp line("{\"reason\":" <> _ = json, artifacts) do
    case String.contains?(json, @crate) and decode_json(json) do
      %{"reason" => "compiler-artifact", "target" => %{"name" => @crate} = target} = message ->
        if "cdylib" in Map.get(target, "crate_types", []),
          do: Enum.filter(message["filenames"], &dynamic_library?/1) ++ artifacts,
          else: artifacts

      _other ->
        artifacts
    end
  end

  defp line(text, artifacts) do
    unless String.starts_with?(String.trim_leading(text), "Finished "),
      do: Mix.shell().info(text)

    artifacts
  end

  defp dynamic_library?(file), do: Path.extname(file) in [".so", ".dylib"]

  ## The load check

  # Loads `installed` into a fresh VM of the same OTP installation, in a
  # module of `OpenAgentsPolicy.Native`'s name with its NIF stubs, exactly as
  # the library will be loaded. A fresh VM, because a load in this one would
  # stay loaded, and because a module that fails to load here is what stalls
  # the Elixir compiler.
  defp check_loads(installed, root, work) do
    tmp = Path.join(work, "nif_check")
    File.mkdir_p!(tmp)
    File.write!(Path.join(tmp, "Elixir.OpenAgentsPolicy.Native.beam"), stub_module(root))

    lib = installed |> Path.rootname(".so") |> String.to_charlist()

    eval = """
    R = (catch 'Elixir.OpenAgentsPolicy.Native':check(#{:io_lib.format(~c"~p", [lib])})),
    case R of
      ok -> io:put_chars("nif_check: ok\\n");
      {error, {Reason, Text}} -> io:format("nif_check: ~p: ~ts~n", [Reason, Text]);
      Other -> io:format("nif_check: ~p~n", [Other])
    end,
    halt(0).
    """

    port =
      Port.open({:spawn_executable, erl()}, [
        :binary,
        :exit_status,
        :stderr_to_stdout,
        args: ["-noshell", "-pa", tmp, "-eval", eval],
        # Flags meant for the developer's own VMs (a node name, say) would
        # make this one fail for reasons of its own.
        env: for(var <- ~w(ERL_FLAGS ERL_AFLAGS ERL_ZFLAGS), do: {String.to_charlist(var), false})
      ])

    await_check(port, "")
  end

  defp await_check(port, output) do
    receive do
      {^port, {:data, data}} ->
        await_check(port, output <> data)

      {^port, {:exit_status, status}} ->
        case String.split(output, "nif_check: ", parts: 2) do
          [_, "ok\n"] -> :ok
          [_, why] -> {:error, String.trim(why)}
          [_] -> {:error, "the VM loading it #{died(status)}: #{inspect(String.trim(output))}"}
        end
    after
      @check_timeout ->
        with {:os_pid, pid} <- Port.info(port, :os_pid),
             do: System.cmd("sh", ["-c", "kill -KILL #{pid}"])

        {:error, "loading it did not finish within #{div(@check_timeout, 1000)} s"}
    end
  end

  # A truncated library, for one, makes the loader touch pages past its end:
  # SIGBUS, which is why the check runs in a VM of its own.
  defp died(status) when status > 128 do
    signal = status - 128

    "was killed by signal #{signal}#{Map.get(%{6 => " (SIGABRT)", 7 => " (SIGBUS)", 11 => " (SIGSEGV)"}, signal)}"
  end

  defp died(status), do: "exited with status #{status}"

  # The `erl` of the OTP installation this VM runs, so the check loads the
  # library into the same ERTS.
  defp erl do
    bundled = Path.join([:code.root_dir(), "bin", "erl"])
    if File.regular?(bundled), do: bundled, else: System.find_executable("erl")
  end

  # A BEAM module named OpenAgentsPolicy.Native, with a stub for every NIF
  # that lib/openagents_policy/native.ex declares (`def f(...), do:
  # :erlang.nif_error(...)`): the VM refuses a library with a function its
  # module lacks, so the check sees what the real load will see. Public for
  # scripts/precompiled_check.sh, which loads artifacts in a VM of another
  # architecture with it.
  @doc false
  def stub_module(root) do
    source = File.read!(Path.join(root, "lib/openagents_policy/native.ex"))
    {_ast, stubs} = source |> Code.string_to_quoted!() |> Macro.prewalk([], &stub/2)

    call = fn fun, args ->
      {:call, 1, {:remote, 1, {:atom, 1, :erlang}, {:atom, 1, fun}}, args}
    end

    check =
      {:function, 1, :check, 1,
       [{:clause, 1, [{:var, 1, :P}], [], [call.(:load_nif, [{:var, 1, :P}, {:integer, 1, 0}])]}]}

    functions =
      for {name, arity} <- Enum.uniq(stubs) do
        vars = for i <- 1..arity//1, do: {:var, 1, :"_A#{i}"}
        body = call.(:nif_error, [{:atom, 1, :nif_not_loaded}])
        {:function, 1, name, arity, [{:clause, 1, vars, [], [body]}]}
      end

    forms =
      [
        {:attribute, 1, :module, :"Elixir.OpenAgentsPolicy.Native"},
        {:attribute, 1, :export, [{:check, 1} | Enum.uniq(stubs)]},
        check
      ] ++ functions

    {:ok, _module, binary} = :compile.forms(forms, [:binary, :return_errors])
    binary
  end

  defp stub({:def, _, [{name, _, args}, [do: {{:., _, [:erlang, :nif_error]}, _, _}]]} = ast, acc)
       when is_atom(name),
       do: {ast, [{name, length(args || [])} | acc]}

  defp stub(ast, acc), do: {ast, acc}

  ## A JSON reader, for cargo's messages (the library has no dependencies).

  defp decode_json(text) do
    case value(skip(text)) do
      {value, rest} -> if skip(rest) == "", do: value, else: :invalid
    end
  catch
    :invalid -> :invalid
  end

  defp skip(<<c, rest::binary>>) when c in ~c" \t\r\n", do: skip(rest)
  defp skip(rest), do: rest

  defp value("{" <> rest), do: members(skip(rest), %{})
  defp value("[" <> rest), do: elements(skip(rest), [])
  defp value("\"" <> rest), do: string(rest, [])
  defp value("true" <> rest), do: {true, rest}
  defp value("false" <> rest), do: {false, rest}
  defp value("null" <> rest), do: {nil, rest}

  defp value(text) do
    case Regex.run(~r/^-?\d+(\.\d+)?([eE][-+]?\d+)?/, text) do
      [number | _] ->
        {elem(Float.parse(number), 0),
         binary_part(text, byte_size(number), byte_size(text) - byte_size(number))}

      nil ->
        throw(:invalid)
    end
  end

  defp members("}" <> rest, acc), do: {acc, rest}

  defp members("\"" <> rest, acc) do
    {key, rest} = string(rest, [])
    ":" <> rest = skip(rest)
    {value, rest} = value(skip(rest))
    acc = Map.put(acc, key, value)

    case skip(rest) do
      "," <> rest -> members(skip(rest), acc)
      "}" <> rest -> {acc, rest}
      _ -> throw(:invalid)
    end
  end

  defp members(_text, _acc), do: throw(:invalid)

  defp elements("]" <> rest, acc), do: {Enum.reverse(acc), rest}

  defp elements(text, acc) do
    {value, rest} = value(text)

    case skip(rest) do
      "," <> rest -> elements(skip(rest), [value | acc])
      "]" <> rest -> {Enum.reverse([value | acc]), rest}
      _ -> throw(:invalid)
    end
  end

  defp string("\"" <> rest, acc), do: {IO.iodata_to_binary(Enum.reverse(acc)), rest}

  defp string("\\u" <> <<hex::binary-4, rest::binary>>, acc) do
    case {String.to_integer(hex, 16), rest} do
      {high, "\\u" <> <<low::binary-4, rest::binary>>} when high in 0xD800..0xDBFF ->
        low = String.to_integer(low, 16) - 0xDC00
        string(rest, [<<0x10000 + (high - 0xD800) * 0x400 + low::utf8>> | acc])

      {code, rest} ->
        string(rest, [<<code::utf8>> | acc])
    end
  end

  defp string("\\" <> <<c, rest::binary>>, acc),
    do: string(rest, [Map.get(@escapes, c, <<c>>) | acc])

  defp string(<<c, rest::binary>>, acc), do: string(rest, [<<c>> | acc])
  defp string("", _acc), do: throw(:invalid)
end
