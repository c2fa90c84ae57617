import Config

config :host_app, ecto_repos: [OpenAgents.Repo]

# Primary keys are UUIDs, as in the host: a user's id is what a link's
# account_id holds, and what the ladder compares.
config :host_app, OpenAgents.Repo,
  migration_primary_key: [type: :binary_id],
  migration_foreign_key: [type: :binary_id],
  migration_timestamps: [type: :utc_datetime]

config :host_app, HostAppWeb.Endpoint,
  adapter: Bandit.PhoenixAdapter,
  url: [host: "localhost"],
  render_errors: [formats: [json: HostAppWeb.ErrorJSON], layout: false]

config :phoenix, :json_library, Jason

# Elixir 1.15 and later configure the default handler's formatter (what
# Phoenix 1.8's generator writes); 1.14 has only the :console backend.
if Version.match?(System.version(), ">= 1.15.0") do
  config :logger, :default_formatter,
    format: "$time $metadata[$level] $message\n",
    metadata: [:request_id]
else
  config :logger, :console, format: "$time $metadata[$level] $message\n", metadata: [:request_id]
end

# The host modules the library calls are its defaults (OpenAgents.Accounts,
# OpenAgents.Repositories, OpenAgents.Transparency.ArtifactLink,
# OpenAgents.Repo, OpenAgents.Accounts.User). The one setting configured for
# :openagents_policy is unloaded_link, per environment: :raise in dev and
# test, :dark in prod.

import_config "#{config_env()}.exs"
