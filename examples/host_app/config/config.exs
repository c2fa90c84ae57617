import Config

# The host modules the library calls. These are the library's defaults; they
# are named here so the example goes through the configuration path a real
# host uses (see OpenAgentsPolicy.Host), and so a release carries them in its
# sys.config.
config :openagents_policy,
  accounts: OpenAgents.Accounts,
  repositories: OpenAgents.Repositories,
  artifact_link: OpenAgents.Transparency.ArtifactLink,
  repo: OpenAgents.Repo
