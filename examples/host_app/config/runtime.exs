import Config

# Read when a release boots (and by `mix` in every environment; dev and test
# settle their database in their own files).
if System.get_env("PHX_SERVER") do
  config :host_app, HostAppWeb.Endpoint, server: true
end

# HOST_APP_SERVED_BY_HEADERS=1 (or true) at boot: every response names the
# node that served it (x-served-by-node; x-policy-digest is always sent).
# Absent, an anonymous client is not told the node's name (HostAppWeb.ServedBy).
config :host_app,
  served_by_headers: System.get_env("HOST_APP_SERVED_BY_HEADERS") in ["1", "true"]

if config_env() == :prod do
  # LOG_LEVEL (debug, info, warning, error) in place of prod's :info.
  if level = System.get_env("LOG_LEVEL") do
    config :logger, level: String.to_existing_atom(level)
  end

  config :host_app, OpenAgents.Repo,
    url: System.get_env("DATABASE_URL", "postgres://postgres:postgres@localhost:5432/host_app"),
    pool_size: String.to_integer(System.get_env("POOL_SIZE", "10"))

  # The API sets no cookie and signs nothing, so the key only has to exist;
  # a deployment that adds sessions must set SECRET_KEY_BASE.
  config :host_app, HostAppWeb.Endpoint,
    http: [ip: {0, 0, 0, 0}, port: String.to_integer(System.get_env("PORT", "4000"))],
    secret_key_base:
      System.get_env("SECRET_KEY_BASE") ||
        Base.encode64(:crypto.strong_rand_bytes(48))
end
