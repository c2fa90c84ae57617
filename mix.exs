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
      # The NIF is fetched or built as OpenAgentsPolicy.Native compiles
      # (rustler_precompiled, or rustler: guides/releases.md).
      elixirc_paths: elixirc_paths(Mix.env()),
      deps: vendor(deps(Mix.env())),
      description: "OpenAgents delegation and disclosure policy, implemented in Rust as a NIF.",
      package: package(),
      docs: docs(),
      # The PLTs under _build (one per OTP and Elixir, dialyxir's naming), so
      # each lane and each MIX_BUILD_ROOT builds its own.
      # The deps' PLT holds the library's direct dependencies only (not
      # rustler_precompiled's :ssl, :public_key, :inets and their trees),
      # which is all its code calls.
      dialyzer: [
        plt_core_path: Path.join(Mix.Project.build_path(), ".."),
        # Ecto is optional, so no application of the library's: added by name.
        plt_add_apps: [:mix, :ecto],
        plt_add_deps: :apps_direct,
        plt_ignore_apps: [:stream_data],
        flags: [:unmatched_returns, :error_handling]
      ],
      aliases: [docs: ["openagents_policy.pictures", "docs"]]
    ]
  end

  # :crypto for the NIF library's SHA-256 (OpenAgentsPolicy.fingerprint/0).
  def application, do: [extra_applications: [:crypto]]

  # Two runtime dependencies: rustler_precompiled fetches the NIF for the
  # host's machine (0.8.4 runs on Elixir 1.14; the OpenAgents app locks
  # 0.9.0), and NimbleOptions validates the host configuration
  # (OpenAgentsPolicy.Host). rustler is optional: it builds the NIF from
  # source in a checkout or with OPENAGENTS_POLICY_BUILD=1 (0.36.0 is the
  # newest whose Mix package runs on Elixir 1.14; 0.37 and later need 1.15).
  # The rest serve the library's own tests and docs.
  #
  # The demo env (`make demo`) declares NimbleOptions alone: Mix looks every
  # declared dependency up, whatever its `:only`, so the demo needs no
  # rustler, no test tools and no docs tools.
  defp deps(:demo), do: [{:nimble_options, "~> 1.1"}]

  defp deps(_env) do
    [
      {:nimble_options, "~> 1.1"},
      {:rustler_precompiled, "~> 0.8"},
      {:rustler, ">= 0.36.0", optional: true},
      # The tests, the benches (MIX_ENV=bench) and the fault runs' load
      # client read and write JSON with Jason.
      # Optional, as Phoenix has it: a host never gets it from this library,
      # and the checkout has it in every env (rustler's compiler needs it for
      # a source build; without `only:` it is not cut from :prod).
      {:jason, "~> 1.4", optional: true},
      # WorkDisclosure.where_visible/2 is compiled where the host has Ecto.
      {:ecto, "~> 3.10", optional: true},
      {:stream_data, "~> 1.1", only: [:dev, :test]},
      {:ex_doc, "~> 0.36", only: :dev, runtime: false},
      # `make dialyzer` (`mix dialyzer`).
      {:dialyxir, "~> 1.4", only: :dev, runtime: false},
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

  # dev/lib holds the docs tooling (Report, Pictures and their Mix tasks):
  # compiled for the library's own docs and tests, and for `make demo`
  # (MIX_ENV=demo, whose one dependency is NimbleOptions), never in a host's
  # build (a dependency compiles as :prod) nor in the package.
  defp elixirc_paths(:test), do: ["lib", "dev/lib", "test/support"]
  defp elixirc_paths(:dev), do: ["lib", "dev/lib"]
  # dev/demo: the stand-in for rustler_precompiled that `make demo` loads
  # its cargo-built NIF with (see native.ex).
  defp elixirc_paths(:demo), do: ["lib", "dev/lib", "dev/demo"]
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
        "guides/changing-a-rule.md": [title: "Changing a rule"],
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
        "Host contract": [
          OpenAgentsPolicy.Host,
          OpenAgentsPolicy.Host.Accounts,
          OpenAgentsPolicy.Host.Repositories,
          OpenAgentsPolicy.Host.ArtifactLink,
          OpenAgentsPolicy.Host.Repo
        ],
        "Decision changes": [
          OpenAgentsPolicy,
          OpenAgentsPolicy.Decisions,
          Mix.Tasks.OpenagentsPolicy.Gate
        ],
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
      # precompiled one (written when a version is cut: guides/releases.md),
      # the crates for a source build; and the decision document, for a diff
      # without loading the NIF (guides/changing-a-rule.md).
      files: ~w(lib native/*/src native/*/Cargo.toml Cargo.toml Cargo.lock mix.exs
           .formatter.exs checksum-Elixir.OpenAgentsPolicy.Native.exs README.md LICENSE
           CHANGELOG.md priv/decisions.json),
      links: %{}
    ]
  end
end
