import Config

# DATABASE_URL names the server and the database; unset, a local PostgreSQL
# with the postgres/postgres account (../drills/postgres.sh starts one).
config :host_app, OpenAgents.Repo,
  url: System.get_env("DATABASE_URL", "postgres://postgres:postgres@localhost:5432/host_app_dev"),
  show_sensitive_data_on_connection_error: true,
  pool_size: 10

# The code reloader recompiles :host_app on each request, and with
# HOST_APP_RELOAD_LIBRARY=1 :openagents_policy too (a Rust edit rebuilds the
# NIF): off by default, as it lengthens every reload (guides/phoenix.md).
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
