defmodule OpenAgentsPolicy.HostTest do
  # Changes the library's host configuration: not async.
  use ExUnit.Case, async: false

  alias OpenAgents.Transparency.Ladder
  alias OpenAgentsPolicy.Host
  alias OpenAgentsPolicy.Host.Boundary

  defmodule OtherAccounts do
    @moduledoc false
    @behaviour Host.Accounts
    def admin?(_user), do: true
  end

  defmodule OtherRepo do
    @moduledoc false
    @behaviour Host.Repo
    def insert(changeset), do: {:error, changeset}
  end

  # A module that exports no callback of any behaviour.
  defmodule Nothing do
    @moduledoc false
  end

  test "configure/1 takes effect at once and hands back what it replaced" do
    before = Host.modules()
    assert before.accounts == OpenAgents.Accounts

    previous = Host.configure(accounts: OtherAccounts)
    on_exit(fn -> Host.configure(previous) end)

    assert previous == before
    assert Host.modules().accounts == OtherAccounts
    assert Ladder.viewer_tier(%OpenAgents.Accounts.User{id: "u", admin: false}) == :glass

    Host.configure(previous)
    assert Host.modules() == before
    assert Ladder.viewer_tier(%OpenAgents.Accounts.User{id: "u", admin: false}) == nil
  end

  test "a key configured as nil goes back to its default" do
    previous = Host.configure(repo: OtherRepo)
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

    assert Boundary.viewer(%OpenAgents.Accounts.User{id: "u"}) == {{:user, true}, "u"}
    assert Boundary.viewer(%{admin: true}) == {:operator, nil}
    assert Boundary.viewer(:glass) == {{:word, :glass}, nil}
  end

  # Each key held to its behaviour, whose callbacks are the expected names:
  # a callback added to a behaviour is refused here until a module lacks it.
  for {key, behaviour} <- [
        accounts: Host.Accounts,
        repositories: Host.Repositories,
        artifact_link: Host.ArtifactLink,
        repo: Host.Repo
      ] do
    test "configure/1 and override/1 refuse a #{key} module without #{inspect(behaviour)}'s callbacks" do
      for {name, arity} <- unquote(behaviour).behaviour_info(:callbacks),
          set <- [&Host.configure/1, &Host.override/1] do
        message =
          ~r/:#{unquote(key)}.*Nothing does not export .*#{Regex.escape("#{name}/#{arity}")}/

        assert_raise NimbleOptions.ValidationError, message, fn ->
          set.([{unquote(key), Nothing}])
        end
      end

      assert Host.modules()[unquote(key)] == Host.defaults()[unquote(key)]
    end
  end

  test "a host module without admin?/1, or one that does not exist, is refused by configure/1" do
    assert_raise NimbleOptions.ValidationError, ~r/admin\?\/1/, fn ->
      Host.configure(accounts: OpenAgents.Repo)
    end

    assert_raise NimbleOptions.ValidationError,
                 ~r/MyApp.Acounts does not export admin\?\/1/,
                 fn ->
                   Host.configure(accounts: MyApp.Acounts)
                 end

    assert Host.modules().accounts == OpenAgents.Accounts
  end
end
