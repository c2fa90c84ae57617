# A message a test waits for may come late on a loaded machine (a CI lane
# beside another): assert_receive waits up to a minute, where ExUnit's
# default is 100 ms. A message that comes at once is still taken at once.
ExUnit.start(assert_receive_timeout: 60_000)
Ecto.Adapters.SQL.Sandbox.mode(OpenAgents.Repo, :manual)
