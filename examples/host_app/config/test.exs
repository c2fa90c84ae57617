import Config

# DATABASE_URL names the server; the test database is its database name with
# "_test" (and MIX_TEST_PARTITION) appended, so `mix test` never touches the
# dev data.
database_url =
  URI.parse(
    System.get_env("DATABASE_URL", "postgres://postgres:postgres@localhost:5432/host_app")
  )

config :host_app, OpenAgents.Repo,
  url:
    URI.to_string(%{
      database_url
      | path: "#{database_url.path}_test#{System.get_env("MIX_TEST_PARTITION")}"
    }),
  pool: Ecto.Adapters.SQL.Sandbox,
  pool_size: System.schedulers_online() * 2,
  # Async tests that seed the same world wait on its unique keys until the
  # sandbox that holds them rolls back, which on a loaded machine can take
  # longer than a statement's default 15 s.
  timeout: 60_000

config :host_app, HostAppWeb.Endpoint,
  http: [ip: {127, 0, 0, 1}, port: 4002],
  secret_key_base: "test-only-secret-key-base-of-the-example-host-app-not-for-production-use",
  server: false

config :logger, level: :warning
config :phoenix, :plug_init_mode, :runtime

# A record whose link was not preloaded raises: a route that forgot the
# preload fails its tests instead of reading the tier column.
config :openagents_policy, unloaded_link: :raise
