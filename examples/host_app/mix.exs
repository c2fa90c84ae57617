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
      # The host's own appup (castle's :appup compiler copies it into ebin);
      # the library writes its own (ebin/openagents_policy.appup).
      appup: "appup.exs",
      compilers: Mix.compilers() ++ [:appup],
      deps: vendor(deps()),
      aliases: aliases(),
      releases: [
        # A release that upgrades in place, made as upstream makes one:
        # Forecastle's steps around :assemble (bin/host_app gains unpack,
        # install and commit; releases/ is laid out for release_handler),
        # then the tarball that `bin/host_app unpack` takes.
        host_app: [
          include_executables_for: [:unix],
          steps: [&Forecastle.pre_assemble/1, :assemble, &Forecastle.post_assemble/1, :tar]
        ]
      ]
    ]
  end

  def application do
    [
      mod: {HostApp.Application, []},
      # :sasl: release_handler, and systools for `mix forecastle.relup`
      # (named here so Mix >= 1.15 keeps it on the code path).
      extra_applications: [:logger, :runtime_tools, :sasl]
    ]
  end

  # Nothing from the library's test/: the host's tests compare what it serves
  # with the library's public API, and the library's suite holds the library
  # to the seeds.
  defp elixirc_paths(:test), do: ["lib", "test/support"]

  defp elixirc_paths(_), do: ["lib"]

  # The library under test, from the repository this example lives in. A
  # checkout carries no checksum file, so the library's NIF is built from its
  # crate by rustler's compiler (rustler_precompiled's `force_build`), and a
  # host that builds it must list rustler itself, as rustler_precompiled
  # documents: the library's own rustler dependency is optional, so it is not
  # fetched for its dependents. runtime: false: rustler is a build tool, never
  # started nor shipped in the release. (0.36.0 is the newest whose Mix
  # package runs on Elixir 1.14.) A package copy that carries the checksum
  # file (scripts/precompiled_check.sh lays this host in one) takes the
  # precompiled artifact instead and never calls rustler.
  #
  # The rest is what a Phoenix JSON API on PostgreSQL needs: Phoenix 1.7 on
  # Elixir 1.14, or 1.8 as the OpenAgents app locks it (1.8.11, Elixir
  # >= 1.15), so each requirement admits both lines. With HEX_VENDOR_DIR set
  # they come from that offline mirror (a path dep, which overrides the
  # requirement), else from Hex.
  defp deps do
    [
      {:openagents_policy, path: "../.."},
      {:rustler, ">= 0.36.0", runtime: false},
      {:phoenix, "~> 1.7.14 or ~> 1.8.0"},
      {:ecto_sql, "~> 3.10"},
      {:postgrex, ">= 0.0.0"},
      {:bandit, "~> 1.5"},
      {:jason, "~> 1.2"},
      # Hot-code upgrades: runtime config before boot and before each
      # install, and (through forecastle) the release steps, the :appup
      # compiler and `mix forecastle.relup`.
      {:castle, "~> 0.3.0"},
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
