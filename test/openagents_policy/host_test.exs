defmodule OpenAgentsPolicy.HostTest do
  # Changes the library's host configuration: not async.
  use ExUnit.Case, async: false

  alias OpenAgentsPolicy.Host

  defmodule OtherAccounts do
    @moduledoc false
    def admin?(_user), do: true
  end

  test "configure/1 takes effect at once and hands back what it replaced" do
    before = Host.modules()
    assert before.accounts == OpenAgents.Accounts

    previous = Host.configure(accounts: OtherAccounts)
    on_exit(fn -> Host.configure(previous) end)

    assert previous == before
    assert Host.modules().accounts == OtherAccounts
    assert Host.admin?(%OpenAgents.Accounts.User{id: "u", admin: false})

    Host.configure(previous)
    assert Host.modules() == before
    refute Host.admin?(%OpenAgents.Accounts.User{id: "u", admin: false})
  end

  test "a key configured as nil goes back to its default" do
    previous = Host.configure(repo: OtherAccounts)
    on_exit(fn -> Host.configure(previous) end)

    Host.configure(repo: nil)
    assert Host.modules().repo == OpenAgents.Repo
  end

  test "an unknown key is refused, not stored" do
    assert_raise NimbleOptions.ValidationError, ~r/unknown options \[:acounts\]/, fn ->
      Host.configure(acounts: OtherAccounts)
    end

    refute Map.has_key?(Host.modules(), :acounts)
  end

  test "a module that is not an atom is refused, and nothing is written" do
    assert_raise NimbleOptions.ValidationError, ~r/:repo/, fn ->
      Host.configure(accounts: OtherAccounts, repo: "OpenAgents.Repo")
    end

    assert Host.modules().accounts == OpenAgents.Accounts
  end

  test "only a user struct makes the host be asked" do
    previous = Host.configure(accounts: OtherAccounts)
    on_exit(fn -> Host.configure(previous) end)

    assert Host.viewer(%OpenAgents.Accounts.User{id: "u"}) == {{:user, true}, "u"}
    assert Host.viewer(%{admin: true}) == {:operator, nil}
    assert Host.viewer(:glass) == {{:word, :glass}, nil}
  end
end
