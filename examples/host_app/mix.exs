# The library's offline-mirror helper (HEX_VENDOR_DIR), shared with its
# mix.exs; loaded only where the checkout has it (dev/ is not in the package).
vendor = Path.expand("../../dev/vendor.exs", __DIR__)
if File.regular?(vendor), do: Code.require_file(vendor)

defmodule HostApp.MixProject do
  use Mix.Project

  def project do
    [
      app: :host_app,
      version: "0.1.0",
      elixir: "~> 1.14",
      start_permanent: Mix.env() == :prod,
      elixirc_paths: elixirc_paths(Mix.env()),
      deps: vendor(deps()),
      aliases: aliases(),
      # A plain Mix release: a new version ships as a new image, node by
      # node (../drills/rolling_replace.sh), never as an upgrade in place.
      releases: [host_app: [include_executables_for: [:unix]]]
    ]
  end

  def application do
    [
      mod: {HostApp.Application, []},
      extra_applications: [:logger, :runtime_tools]
    ]
  end

  # Nothing from the library's test/: the host's tests compare what it serves
  # with the library's public API, and the library's suite holds the library
  # to the seeds.
  defp elixirc_paths(:test), do: ["lib", "test/support"]

  defp elixirc_paths(_), do: ["lib"]

  # The library from the repository this example lives in. A checkout carries
  # no checksum file, so its NIF is built from its crate by rustler
  # (rustler_precompiled's `force_build`), which a host that builds it must
  # list itself (the library's rustler dependency is optional); runtime:
  # false, a build tool only (0.36.0: the newest on Elixir 1.14). A package
  # copy with the checksum file (../../scripts/precompiled_check.sh) takes the
  # precompiled artifact and never calls rustler.
  #
  # The rest: a Phoenix JSON API on PostgreSQL, each requirement admitting
  # Phoenix 1.7 (Elixir 1.14) and 1.8 (as the OpenAgents app locks it). With
  # HEX_VENDOR_DIR set they come from that offline mirror, else from Hex.
  defp deps do
    [
      {:openagents_policy, path: "../.."},
      {:rustler, ">= 0.36.0", runtime: false},
      {:phoenix, "~> 1.7.14 or ~> 1.8.0"},
      {:ecto_sql, "~> 3.10"},
      {:postgrex, ">= 0.0.0"},
      {:bandit, "~> 1.5"},
      {:jason, "~> 1.2"},
      # `make bench-host` (../../bench/host_requests.exs, MIX_ENV=bench): never
      # in a release nor in the tests' build.
      {:benchee, "~> 1.3", only: :bench, runtime: false}
    ]
  end

  # Offline builds (HEX_VENDOR_DIR), where the library's dev/vendor.exs is.
  defp vendor(deps) do
    if Code.ensure_loaded?(OpenAgentsPolicy.Vendor),
      do: OpenAgentsPolicy.Vendor.deps(deps),
      else: deps
  end

  defp aliases do
    [
      setup: ["deps.get", "ecto.setup"],
      "ecto.setup": ["ecto.create", "ecto.migrate", "run priv/repo/seeds.exs"],
      "ecto.reset": ["ecto.drop", "ecto.setup"],
      test: ["ecto.create --quiet", "ecto.migrate --quiet", "test"]
    ]
  end
end
