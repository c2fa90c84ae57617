import Config

# Everything that differs per machine (database, port, secret) is read when
# the release boots: see config/runtime.exs.
config :logger, level: :info

# A record whose link was not preloaded reads dark: a forgotten preload
# hides a record rather than showing one whose link may be revoked.
config :openagents_policy, unloaded_link: :dark
