defmodule OpenAgentsPolicy.PrecompiledTest do
  # The precompiled path of the NIF compiler, as a host meets it: a host
  # project depending on a copy of this library that holds only the files
  # `package/0` lists (as Hex unpacks a package; plus dev/vendor.exs, for
  # this machine has no Hex: see ProjectCopy), with the checksum file a
  # release puts beside them, artifacts served over HTTP from 127.0.0.1, and
  # no cargo, rustc or C compiler on PATH.
  #
  # The artifact served is this VM's own library, packed as `make
  # precompiled` packs one (scripts/precompiled_check.sh does the same with
  # the real dist/). The copies live in directories of their own, apart from
  # ProjectCopy.fresh!/0's.
  use ExUnit.Case, async: true

  import OpenAgentsPolicy.Test.ProjectCopy,
    only: [base: 0, mix: 3, answer: 1, ask_expression: 0, copy_vendor_helper!: 2, target_dir: 0]

  @moduletag timeout: 600_000
  @checksum_file "checksum-Elixir.OpenAgentsPolicy.Native.exs"

  setup_all do
    root = Path.join(base(), "precompiled")
    File.rm_rf!(root)
    File.mkdir_p!(root)

    package = Path.join(root, "package")
    copy_package!(package)

    # The artifact for this VM, named as the compiler looks for it.
    version = Mix.Project.config()[:version]
    triple = Mix.OpenAgentsPolicy.Target.triple()
    library = "libopenagents_policy_nif-v#{version}-nif-2.15-#{triple}.so"
    artifact = library <> ".tar.gz"
    good = File.read!(OpenAgentsPolicy.Native.library_file())
    tar = pack(library, good)

    served = Path.join(root, "served")
    File.mkdir_p!(served)
    File.write!(Path.join(served, artifact), tar)

    host = Path.join(root, "host")
    File.mkdir_p!(Path.join(host, "config"))

    File.write!(Path.join(host, "mix.exs"), """
    defmodule PackageHost.MixProject do
      use Mix.Project
      def project,
        do: [app: :package_host, version: "0.1.0", deps: [{:openagents_policy, path: #{inspect(package)}}]]
    end
    """)

    port = OpenAgentsPolicy.Test.Served.serve!(root, served)

    %{
      package: package,
      host: host,
      served: served,
      library: library,
      artifact: artifact,
      digest: sha256(tar),
      good: good,
      url: "http://127.0.0.1:#{port}",
      path: no_rust_path(Path.join(root, "bin"))
    }
  end

  # The files `package/0` lists, expanded as Hex expands them. The checksum
  # file is among them (a checkout has none: setup writes the copy's).
  defp copy_package!(package) do
    source = Path.dirname(Mix.Project.project_file())
    assert @checksum_file in Mix.Project.config()[:package][:files]

    files =
      for entry <- Mix.Project.config()[:package][:files],
          match <- Path.wildcard(Path.join(source, entry)),
          file <- if(File.dir?(match), do: Path.wildcard(Path.join(match, "**")), else: [match]),
          File.regular?(file),
          do: Path.relative_to(file, source)

    # The offline-mirror helper is this repository's own, never the package's.
    assert "dev/vendor.exs" not in files
    assert Enum.all?(files, &(not String.starts_with?(&1, "dev/")))

    for file <- files do
      File.mkdir_p!(Path.dirname(Path.join(package, file)))
      File.cp!(Path.join(source, file), Path.join(package, file))
    end

    copy_vendor_helper!(source, package)
  end

  defp pack(name, content) do
    tmp = Path.join(System.tmp_dir!(), "pack-#{System.unique_integer([:positive])}.tar.gz")

    :ok =
      :erl_tar.create(String.to_charlist(tmp), [{String.to_charlist(name), content}], [
        :compressed
      ])

    data = File.read!(tmp)
    File.rm!(tmp)
    data
  end

  defp sha256(data), do: :crypto.hash(:sha256, data) |> Base.encode16(case: :lower)

  # A directory of links to every program on PATH except compilers, linkers
  # and Rust's tools: a machine with no Rust and no C toolchain.
  defp no_rust_path(bin) do
    File.mkdir_p!(bin)

    refused =
      ~r/^(cargo.*|rustc|rustup|rustdoc|cc|c\+\+|gcc.*|g\+\+.*|clang.*|ld(\..*)?|zig|.*-(gcc|cc|ld)(-.*)?)$/

    for dir <- System.get_env("PATH") |> String.split(":") |> Enum.reverse(),
        File.dir?(dir),
        program <- File.ls!(dir),
        not Regex.match?(refused, program) do
      link = Path.join(bin, program)
      File.rm(link)
      File.ln_s(Path.join(dir, program), link)
    end

    for tool <- ~w(cargo rustc cc gcc ld), do: refute(File.exists?(Path.join(bin, tool)))
    bin
  end

  defp write_checksums!(ctx, entries) do
    body = for {file, digest} <- entries, do: ~s(  "#{file}" => "sha256:#{digest}",\n)
    File.write!(Path.join(ctx.package, @checksum_file), ["%{\n", body, "}\n"])
  end

  # Runs `mix args` in the host, from a clean _build, with the package's
  # checksum file listing the artifact and `env` on top.
  defp host(ctx, args, env) do
    File.rm_rf!(Path.join(ctx.host, "_build"))

    env =
      [
        {"PATH", ctx.path},
        {"OPENAGENTS_POLICY_NIF_BASE_URL", ctx.url},
        {"RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH", ctx.cache},
        {"OPENAGENTS_POLICY_BUILD", nil},
        {"RUSTLER_PRECOMPILED_FORCE_BUILD_ALL", nil},
        {"CARGO_TARGET_DIR", nil}
      ] ++ env

    mix(ctx.host, args, env)
  end

  defp installed(ctx) do
    Path.wildcard(Path.join(ctx.host, "_build/prod/lib/openagents_policy/priv/native/*"))
  end

  setup ctx do
    cache = Path.join(Path.dirname(ctx.host), "cache-#{System.unique_integer([:positive])}")
    write_checksums!(ctx, [{ctx.artifact, ctx.digest}])
    %{cache: cache}
  end

  test "a host with no Rust compiles the library from the served artifact, then from the cache offline",
       ctx do
    {status, output} = host(ctx, ["run", "-e", ask_expression()], [])
    assert status == 0, output
    assert output =~ "Downloading #{ctx.url}/#{ctx.artifact}"
    assert answer(output) == "active"
    assert [library] = installed(ctx)
    assert File.read!(library) == ctx.good

    # No server: the cache serves, checked again.
    {status, output} =
      host(ctx, ["run", "-e", ask_expression()], [
        {"OPENAGENTS_POLICY_NIF_BASE_URL", "http://127.0.0.1:9"}
      ])

    assert status == 0, output
    refute output =~ "Downloading"
    assert answer(output) == "active"
  end

  describe "each refusal fails the compile, names the way out and installs nothing" do
    defp refused(ctx, env \\ []) do
      {status, output} = host(ctx, ["compile"], env)
      assert status != 0, output
      assert output =~ "OPENAGENTS_POLICY_BUILD=1", output
      assert output =~ "OPENAGENTS_POLICY_NIF_PATH", output
      assert installed(ctx) == []
      output
    end

    test "an artifact whose digest is not the listed one", ctx do
      wrong = String.duplicate("0", 64)
      write_checksums!(ctx, [{ctx.artifact, wrong}])
      output = refused(ctx)
      assert output =~ ctx.artifact
      assert output =~ "expected: sha256:#{wrong}"
      assert output =~ "actual:   sha256:#{ctx.digest}"
    end

    test "a tampered cached artifact is not used (and a tampered download is refused)", ctx do
      File.mkdir_p!(ctx.cache)
      File.write!(Path.join(ctx.cache, ctx.artifact), "tampered")
      tampered_served = Path.join(ctx.served, ctx.artifact)
      tar = File.read!(tampered_served)
      File.write!(tampered_served, tar <> "x")
      on_exit(fn -> File.write!(tampered_served, tar) end)

      output = refused(ctx)

      assert output =~
               "The cached #{Path.join(ctx.cache, ctx.artifact)} has digest #{sha256("tampered")}"

      assert output =~ "expected: sha256:#{ctx.digest}"
      assert output =~ "actual:   sha256:#{sha256(tar <> "x")}"
    end

    test "an artifact the checksum file does not list", ctx do
      write_checksums!(ctx, [])
      output = refused(ctx)

      assert output =~
               "lists no artifact for target #{Mix.OpenAgentsPolicy.Target.triple()}"

      assert output =~ "cargo was not found on PATH"
    end

    test "a listed artifact the server does not have (404)", ctx do
      output = refused(ctx, [{"OPENAGENTS_POLICY_NIF_BASE_URL", ctx.url <> "/missing"}])
      assert output =~ "HTTP 404"
      assert output =~ ctx.artifact
      assert output =~ "expected: sha256:#{ctx.digest}"
    end

    test "an unknown target", ctx do
      output = refused(ctx, [{"TARGET_ARCH", "mips64"}])
      assert output =~ "lists no artifact for target mips64-unknown-linux-gnu"
    end

    test "a digest other than the listed one is refused with cargo on PATH too", ctx do
      write_checksums!(ctx, [{ctx.artifact, String.duplicate("0", 64)}])
      output = refused(ctx, [{"PATH", System.get_env("PATH")}])
      assert output =~ "actual:   sha256:#{ctx.digest}"
      refute output =~ "building it from source"
    end

    test "a checksum file that is code, not data, is not run", ctx do
      marker = Path.join(ctx.host, "evaluated")
      File.rm(marker)

      File.write!(
        Path.join(ctx.package, @checksum_file),
        "File.write!(#{inspect(marker)}, \"x\")\n"
      )

      output = refused(ctx)
      assert output =~ "is not a checksum file"
      refute File.exists?(marker)
    end
  end

  # A listed artifact whose digest matches but whose library does not load
  # (here a file that is no library at all; on a real machine, one built
  # wrong for it, which the macOS and musl artifacts could be unseen: this
  # machine checks their structure only).
  describe "a precompiled library that fails its load check" do
    setup ctx do
      broken = pack(ctx.library, "not a library\n")
      dir = Path.join(ctx.served, "broken")
      File.mkdir_p!(dir)
      File.write!(Path.join(dir, ctx.artifact), broken)
      write_checksums!(ctx, [{ctx.artifact, sha256(broken)}])
      %{broken: {"OPENAGENTS_POLICY_NIF_BASE_URL", ctx.url <> "/broken"}}
    end

    test "without cargo: refused with the loader's error and the ways out", ctx do
      output = refused(ctx, [ctx.broken])
      assert output =~ "Downloading #{ctx.url}/broken/#{ctx.artifact}"
      assert output =~ "load_failed: Failed to load NIF library: '"
      assert output =~ "file too short'"
      assert output =~ "The file is not a shared library (no ELF or Mach-O header)."
      assert output =~ "cargo was not found on PATH, so it cannot be built from source instead"
      refute output =~ "building it from source"
    end

    test "with cargo on PATH: built from source instead, saying so", ctx do
      # A target directory of its own (the package copy's builds carry its
      # own checkout mark, so they share nothing with ProjectCopy's), kept
      # between runs: cold once, incremental after.
      target = target_dir() <> "-precompiled"

      {status, output} =
        host(ctx, ["run", "-e", ask_expression()], [
          ctx.broken,
          {"PATH", System.get_env("PATH")},
          {"CARGO_TARGET_DIR", target}
        ])

      assert status == 0, output

      assert output =~
               "The precompiled NIF #{ctx.artifact} failed its load check " <>
                 "(load_failed: Failed to load NIF library: '"

      assert output =~ "file too short'): building it from source with cargo instead"
      assert answer(output) == "active"
      assert [library] = installed(ctx)

      assert File.read!(library) ==
               File.read!(Path.join([target, "debug", "libopenagents_policy_nif.so"]))
    end
  end
end
