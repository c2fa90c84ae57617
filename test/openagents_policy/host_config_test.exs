defmodule OpenAgentsPolicy.HostConfigTest do
  # The host configuration follows the application
  # environment, and configure/1 cannot be undone by a racing reader.
  #
  # async: false: these tests change the application environment, which
  # every process reads.
  use ExUnit.Case, async: false

  alias OpenAgents.Accounts.User
  alias OpenAgents.Transparency.{Ladder, WorkDisclosure}
  alias OpenAgentsPolicy.Host
  alias OpenAgentsPolicy.Test.{Everyone, NoOne}

  @repository %{id: "repo-1"}
  @user %User{id: "u-1", admin: false}

  setup do
    previous = Application.get_env(:openagents_policy, :accounts)

    on_exit(fn ->
      if previous,
        do: Application.put_env(:openagents_policy, :accounts, previous),
        else: Application.delete_env(:openagents_policy, :accounts)
    end)
  end

  defp tier, do: WorkDisclosure.viewer(@repository, @user).tier

  test "Application.put_env/3 after the first call is used from the next call" do
    assert tier() == :pulse

    Application.put_env(:openagents_policy, :accounts, Everyone)
    assert tier() == :glass
    assert Host.modules().accounts == Everyone

    Application.delete_env(:openagents_policy, :accounts)
    assert tier() == :pulse
    assert Host.modules().accounts == OpenAgents.Accounts
  end

  test "a whole-application change (runtime.exs, a release's config change) is used from the next call" do
    assert tier() == :pulse
    Application.put_all_env(openagents_policy: [accounts: Everyone])
    assert tier() == :glass
  end

  test "configure/1 writes the application environment and hands back what it replaced" do
    assert tier() == :pulse
    previous = Host.configure(accounts: Everyone)
    assert previous.accounts == OpenAgents.Accounts
    assert Application.get_env(:openagents_policy, :accounts) == Everyone
    assert tier() == :glass

    assert Host.configure(previous).accounts == Everyone
    assert tier() == :pulse
  end

  @rounds 300
  @readers 8

  # Readers call the library without pause while configure/1 switches
  # :accounts twice in a row, each round; once every reader has made calls
  # since, the second switch must hold. A cache that configure/1 erased and
  # readers refilled would fail this: a reader refilling it after the first
  # switch could write that back over the second.
  test "stress: configure/1 is never undone by a racing reader (#{@rounds} rounds, #{@readers} readers)" do
    readers = for _ <- 1..@readers, do: spawn_link(fn -> read() end)

    lost =
      for round <- 1..@rounds,
          {first, second} =
            if(rem(round, 2) == 0, do: {NoOne, Everyone}, else: {Everyone, NoOne}),
          Host.configure(accounts: first),
          Host.configure(accounts: second),
          :ok = sync(readers),
          Host.modules().accounts != second or
            Ladder.viewer_tier(@user) == :glass != second.admin?(@user),
          do: round

    Enum.each(readers, &send(&1, :stop))
    assert lost == [], "#{length(lost)} of #{@rounds} switches were lost: rounds #{inspect(lost)}"
  end

  defp read do
    receive do
      :stop ->
        :ok

      {:sync, from} ->
        Host.modules()
        send(from, {:synced, self()})
        read()
    after
      0 ->
        Host.modules()
        Ladder.viewer_tier(@user)
        read()
    end
  end

  defp sync(readers) do
    Enum.each(readers, &send(&1, {:sync, self()}))
    for reader <- readers, do: receive(do: ({:synced, ^reader} -> :ok))
    :ok
  end
end
