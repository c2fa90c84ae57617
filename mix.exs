# The NIF compiler must exist before lib/ is compiled, so it is a set of
# scripts that mix.exs loads rather than modules of the library (.exs: not
# compiled twice): the task, and its jobs under lib/mix/openagents_policy/.
# Compiling them would cost every Mix command (a host's too) about a third of
# a second, so their compiled modules are kept under _build/nif_compiler,
# named by the scripts' digest, the OTP release and the Elixir version (a
# build tree may be shared by two toolchains), and loaded from there while
# all three are unchanged. A cache file that cannot be read or loaded is
# compiled again.
unless Code.ensure_loaded?(Mix.Tasks.Compile.OpenagentsPolicyNif) do
  scripts =
    [Path.join(__DIR__, "lib/mix/tasks/compile.openagents_policy_nif.exs")] ++
      Enum.sort(Path.wildcard(Path.join(__DIR__, "lib/mix/openagents_policy/*.exs")))

  sources = Enum.map(scripts, &{&1, File.read!(&1)})
  digest = Base.encode16(:erlang.md5(:erlang.term_to_binary(sources)), case: :lower)
  key = "#{digest}-otp#{System.otp_release()}-elixir#{System.version()}"
  cached = Path.join([__DIR__, "_build", "nif_compiler", key <> ".etf"])

  loaded? =
    try do
      modules = cached |> File.read!() |> :erlang.binary_to_term([:safe])

      modules != [] and
        Enum.all?(modules, fn {module, {script, beam}} ->
          match?({:module, ^module}, :code.load_binary(module, to_charlist(script), beam))
        end)
    rescue
      _ -> false
    end

  unless loaded? do
    modules =
      for {script, source} <- sources,
          {module, beam} <- Code.compile_string(source, script),
          do: {module, {script, beam}}

    # Written under a name of this process's, then renamed: a concurrent Mix
    # never reads half a file. A read-only checkout just compiles it again.
    tmp = "#{cached}.#{System.pid()}.tmp"

    with :ok <- File.mkdir_p(Path.dirname(cached)),
         :ok <- File.write(tmp, :erlang.term_to_binary(modules)) do
      File.rename(tmp, cached)
    end
  end
end

# The appup writer (after the Elixir compiler): a script for the same reason,
# small enough to compile on every Mix start.
unless Code.ensure_loaded?(Mix.Tasks.Compile.OpenagentsPolicyAppup),
  do: Code.require_file("lib/mix/tasks/compile.openagents_policy_appup.exs", __DIR__)

# The offline-mirror helper (HEX_VENDOR_DIR), shared with
# examples/host_app/mix.exs: this repository's own CI and dev only, so it is
# in dev/ and not in the package; a copy without it (a Hex install) builds
# with its deps as they are written.
vendor = Path.join(__DIR__, "dev/vendor.exs")
if File.regular?(vendor), do: Code.require_file(vendor)

defmodule OpenAgentsPolicy.MixProject do
  use Mix.Project

  @version "0.1.0"

  def project do
    [
      app: :openagents_policy,
      version: @version,
      elixir: "~> 1.14",
      # The NIF before Elixir (modules call it while they compile); the appup,
      # ebin/openagents_policy.appup, after (it lists the compiled modules).
      compilers: [:openagents_policy_nif] ++ Mix.compilers() ++ [:openagents_policy_appup],
      elixirc_paths: elixirc_paths(Mix.env()),
      deps: vendor(deps(Mix.env())),
      description: "OpenAgents delegation and disclosure policy, implemented in Rust as a NIF.",
      package: package(),
      # Where the compiler fetches the precompiled NIFs that the checksum file
      # lists (see guides/releases.md); OPENAGENTS_POLICY_NIF_BASE_URL or
      # `config :openagents_policy, nif_base_url: ...` override it.
      nif_base_url:
        "https://github.com/OpenAgentsInc/openagents_policy/releases/download/v#{@version}",
      docs: docs(),
      aliases: [docs: ["openagents_policy.pictures", "docs"]]
    ]
  end

  def application, do: []

  # The library has no dependency at build or run time, so a host never gets a
  # version conflict from it. These serve its own tests and docs only. The
  # demo env (`make demo`) declares none at all: Mix looks every declared
  # dependency up, whatever its `:only`, and without Hex a Hex dependency
  # stops it, so the demo builds with Elixir and cargo alone.
  defp deps(:demo), do: []

  defp deps(_env) do
    [
      # The tests' oracle reads its fixture with Jason; `make bench` and `make
      # fuzz` (MIX_ENV=bench) load the oracle too.
      {:jason, "~> 1.4", only: [:dev, :test, :bench]},
      {:stream_data, "~> 1.1", only: [:dev, :test]},
      {:ex_doc, "~> 0.36", only: :dev, runtime: false},
      # `make bench` (MIX_ENV=bench: the library compiled as a host compiles it).
      {:benchee, "~> 1.3", only: :bench, runtime: false}
    ]
  end

  # Offline builds: see dev/vendor.exs (HEX_VENDOR_DIR), where it exists.
  defp vendor(deps) do
    if Code.ensure_loaded?(OpenAgentsPolicy.Vendor),
      do: OpenAgentsPolicy.Vendor.deps(deps),
      else: deps
  end

  # dev/ holds the docs tooling (Report, Pictures and their Mix tasks): compiled
  # for the library's own docs and tests, and for `make demo` (MIX_ENV=demo,
  # which has no dependencies), never in a host's build (a dependency compiles
  # as :prod) nor in the package.
  defp elixirc_paths(:test), do: ["lib", "dev", "test/support"]
  defp elixirc_paths(env) when env in [:dev, :demo], do: ["lib", "dev"]
  defp elixirc_paths(_), do: ["lib"]

  # `mix docs` (the alias above first redraws guides/assets/*.svg from the core).
  defp docs do
    [
      source_ref: "v#{@version}",
      main: "readme",
      extras: [
        "README.md": [title: "Overview"],
        "guides/phoenix.md": [title: "Adding it to a Phoenix app"],
        "guides/openagents-app.md": [title: "Adopting it in the OpenAgents app"],
        "guides/host-configuration.md": [title: "Host configuration"],
        "guides/releases.md": [title: "Releases and prebuilt libraries"],
        "guides/deploying.md": [title: "Deploying it like the app does"],
        "guides/disclosure-model.md": [title: "The disclosure model"],
        "guides/delegation-targets.md": [title: "Delegation targets"],
        "guides/rust.md": [title: "The Rust API"],
        "guides/performance.md": [title: "Performance"],
        "guides/reliability.md": [title: "Reliability under faults"],
        "CHANGELOG.md": [title: "Changelog"],
        "CONTRIBUTING.md": [title: "Contributing"]
      ],
      groups_for_extras: [Guides: ~r{^guides/}],
      assets: %{"guides/assets" => "assets"},
      # Native is hidden (@moduledoc false), yet worth naming in prose; `Access`
      # in these docs is the Rust crate's enum, not Elixir's module.
      skip_code_autolink_to: ["OpenAgentsPolicy.Native", "Access"],
      groups_for_modules: [
        "Public API": [
          OpenAgents.Delegations.Target,
          OpenAgents.Transparency.WorkDisclosure,
          OpenAgents.Transparency.Ladder
        ],
        "Host boundary": [OpenAgentsPolicy.Host, OpenAgentsPolicy.Scheduler],
        "Hot upgrades": [OpenAgentsPolicy, OpenAgentsPolicy.Upgrade, OpenAgentsPolicy.LoadCheck],
        # dev/: the library's own docs tooling, not in the package.
        "Docs tooling (dev only)": [
          Mix.Tasks.OpenagentsPolicy.Show,
          Mix.Tasks.OpenagentsPolicy.Pictures,
          OpenAgentsPolicy.Report,
          OpenAgentsPolicy.Pictures
        ]
      ]
    ]
  end

  defp package do
    [
      licenses: ["MIT"],
      # Everything a dependent needs on both paths: the checksum file for the
      # precompiled one (written by `make precompiled`, copied in when a
      # version is cut), the crates for a source build.
      files: ~w(lib native/*/src native/*/Cargo.toml Cargo.toml Cargo.lock mix.exs
           .formatter.exs checksum-Elixir.OpenAgentsPolicy.Native.exs README.md LICENSE
           CHANGELOG.md),
      links: %{}
    ]
  end
end
