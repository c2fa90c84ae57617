import Config

# `make bench-host` (../../bench/host_requests.exs): the host as prod builds
# and configures it (unloaded_link :dark, logger at :info raised to :warning
# so a request logs nothing), serving on loopback from a database of the
# bench's own (HOST_BENCH_DATABASE_URL, never DATABASE_URL: the bench seeds
# 200 attempts into it and leaves them there).
import_config "prod.exs"

config :host_app, OpenAgents.Repo,
  url:
    System.get_env(
      "HOST_BENCH_DATABASE_URL",
      "postgres://postgres:postgres@localhost:5432/host_bench"
    ),
  pool_size: 10

config :host_app, HostAppWeb.Endpoint,
  http: [ip: {127, 0, 0, 1}, port: String.to_integer(System.get_env("HOST_BENCH_PORT", "4123"))],
  server: true,
  secret_key_base: "bench-only-secret-key-base-of-the-example-host-app-not-for-production-use"

config :logger, level: :warning
