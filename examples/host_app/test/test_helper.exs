ExUnit.start()
Ecto.Adapters.SQL.Sandbox.mode(OpenAgents.Repo, :manual)
