import Config

# DATABASE_URL names the server and the database; unset, a local PostgreSQL
# with the postgres/postgres account (scripts/postgres.sh starts one).
config :host_app, OpenAgents.Repo,
  url: System.get_env("DATABASE_URL", "postgres://postgres:postgres@localhost:5432/host_app_dev"),
  show_sensitive_data_on_connection_error: true,
  pool_size: 10

# The code reloader recompiles :host_app on each request. With
# HOST_APP_RELOAD_LIBRARY=1 (while editing the library's Rust) it recompiles
# :openagents_policy too: rustler names every file of the library's crates as
# an external resource of OpenAgentsPolicy.Native, so an edit to one
# recompiles that module, which rebuilds the NIF (cargo) and loads it. Off
# otherwise: that check lengthens every reload, and on Elixir below 1.15
# Phoenix 1.7 has each reload's consolidated protocols purged meanwhile
# (guides/phoenix.md, "In development").
reload_library? = System.get_env("HOST_APP_RELOAD_LIBRARY") in ["1", "true"]

config :host_app, HostAppWeb.Endpoint,
  http: [ip: {127, 0, 0, 1}, port: String.to_integer(System.get_env("PORT", "4000"))],
  check_origin: false,
  code_reloader: true,
  reloadable_apps: [:host_app] ++ if(reload_library?, do: [:openagents_policy], else: []),
  reloadable_compilers: [:elixir, :app],
  debug_errors: false,
  secret_key_base: "dev-only-secret-key-base-of-the-example-host-app-not-for-production-use"

if Version.match?(System.version(), ">= 1.15.0"),
  do: config(:logger, :default_formatter, format: "[$level] $message\n"),
  else: config(:logger, :console, format: "[$level] $message\n")

config :phoenix, :stacktrace_depth, 20
config :phoenix, :plug_init_mode, :runtime

# A record whose link was not preloaded raises, naming the preload it needs
# (OpenAgentsPolicy.Host, "A link that was not loaded").
config :openagents_policy, unloaded_link: :raise
