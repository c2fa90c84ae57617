import Config

# Everything that differs per machine (database, port, secret) is read when
# the release boots: see config/runtime.exs.
config :logger, level: :info
