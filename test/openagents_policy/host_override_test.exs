defmodule OpenAgentsPolicy.HostOverrideTest do
  # A test can use other host modules without leaking
  # them into its async neighbours. async: true on purpose: every other async
  # module of the suite (the concurrency and fuzz tests call the host through
  # the defaults) is a neighbour that must not see these overrides.
  use ExUnit.Case, async: true

  alias OpenAgents.Accounts.User
  alias OpenAgents.Transparency.WorkDisclosure
  alias OpenAgentsPolicy.Host
  alias OpenAgentsPolicy.Test.{Everyone, NoOne}

  defmodule NoMembers do
    @moduledoc false
    @behaviour Host.Repositories
    def member?(_repository, _user), do: false
  end

  @repository %{id: "repo-1"}
  # An operator by the default stand-in's rule (its `admin` field).
  @admin %User{id: "u-1", admin: true}

  defp tier, do: WorkDisclosure.viewer(@repository, @admin).tier

  test "an override holds for the process and the tasks it starts, and nowhere else" do
    assert tier() == :glass
    assert Host.override(accounts: NoOne) == :ok
    assert tier() == :pulse

    assert Task.await(Task.async(fn -> tier() end)) == :pulse
    # A task of a task: the override is found up its $callers.
    assert Task.await(Task.async(fn -> Task.await(Task.async(fn -> tier() end)) end)) == :pulse

    # A process that does not name this one as a caller.
    parent = self()
    spawn(fn -> send(parent, {:tier, tier()}) end)
    assert_receive {:tier, :glass}

    # Keys not overridden keep their configured modules.
    assert Host.modules().repositories == OpenAgents.Repositories
  end

  test "clear_override/0 and a nil key end an override" do
    Host.override(accounts: NoOne, repositories: NoMembers)
    assert Host.modules().repositories == NoMembers

    Host.override(repositories: nil)
    assert Host.modules().repositories == OpenAgents.Repositories
    assert tier() == :pulse

    assert Host.clear_override() == :ok
    assert tier() == :glass
  end

  test "an unknown key is refused, and nothing is overridden" do
    assert_raise NimbleOptions.ValidationError, ~r/unknown options \[:acounts\]/, fn ->
      Host.override(acounts: NoOne)
    end

    assert Host.modules().accounts == OpenAgents.Accounts
  end

  @processes 64
  @calls 500

  test "#{@processes} concurrent overriders, as async tests are, each see only their own" do
    parent = self()

    pids =
      for i <- 1..@processes do
        {module, expected} = if rem(i, 2) == 0, do: {Everyone, :glass}, else: {NoOne, :pulse}

        spawn_link(fn ->
          Host.override(accounts: module)
          send(parent, {:ready, self()})
          receive do: (:go -> :ok)

          seen =
            for _ <- 1..@calls,
                tier = if(rem(i, 3) == 0, do: Task.await(Task.async(&tier/0)), else: tier()),
                tier != expected,
                do: tier

          send(parent, {:done, self(), seen})
        end)
      end

    for pid <- pids, do: assert_receive({:ready, ^pid}, 60_000)
    Enum.each(pids, &send(&1, :go))

    leaks =
      for pid <- pids, reduce: 0 do
        acc -> receive(do: ({:done, ^pid, seen} -> acc + length(seen)))
      end

    assert leaks == 0, "#{leaks} of #{@processes * @calls} calls saw another process's modules"
  end
end
