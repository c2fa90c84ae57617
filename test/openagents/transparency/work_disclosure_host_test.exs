defmodule OpenAgents.Transparency.WorkDisclosureHostTest do
  # Changes application config, which every module reads at call time: not async.
  use ExUnit.Case, async: false

  alias OpenAgents.Accounts.User
  alias OpenAgents.Transparency.{ArtifactLink, Ladder, WorkDisclosure}
  alias OpenAgentsPolicy.Test.Changeset

  # ── Host modules a host (or this test) can configure in their place ──

  defmodule BossAccounts do
    @moduledoc false
    @behaviour OpenAgentsPolicy.Host.Accounts
    # Operators are decided by id here, not by the struct's `admin` field.
    def admin?(%User{id: id}), do: id == "boss"
  end

  defmodule TruthyAccounts do
    @moduledoc false
    @behaviour OpenAgentsPolicy.Host.Accounts
    def admin?(%User{}), do: :yes
  end

  defmodule RaisingAccounts do
    @moduledoc false
    @behaviour OpenAgentsPolicy.Host.Accounts
    def admin?(viewer), do: raise("Accounts.admin?/1 was asked about #{inspect(viewer)}")
  end

  defmodule EveryoneIsAMember do
    @moduledoc false
    @behaviour OpenAgentsPolicy.Host.Repositories
    def member?(_repository, %User{}), do: true
  end

  defmodule NilMembership do
    @moduledoc false
    @behaviour OpenAgentsPolicy.Host.Repositories
    def member?(_repository, _user), do: nil
  end

  defmodule RaisingRepositories do
    @moduledoc false
    @behaviour OpenAgentsPolicy.Host.Repositories
    def member?(_repository, user),
      do: raise("Repositories.member?/2 was asked about #{inspect(user)}")
  end

  defmodule RefusingRepo do
    @moduledoc false
    @behaviour OpenAgentsPolicy.Host.Repo
    def insert(changeset) do
      send(self(), {:refusing_repo, changeset})
      {:error, changeset}
    end
  end

  defmodule RaisingRepo do
    @moduledoc false
    @behaviour OpenAgentsPolicy.Host.Repo
    def insert(changeset), do: raise("Repo.insert/1 was called with #{inspect(changeset)}")
  end

  defmodule OtherLink do
    @moduledoc false
    @behaviour OpenAgentsPolicy.Host.ArtifactLink
    defstruct [:id, :account_id, :tier, :attrs]
    def changeset(%__MODULE__{} = link, attrs), do: {:other_changeset, link, attrs}
  end

  defmodule OtherRepo do
    @moduledoc false
    @behaviour OpenAgentsPolicy.Host.Repo
    def insert({:other_changeset, link, attrs}),
      do:
        {:ok,
         %{link | id: "other-1", account_id: attrs.account_id, tier: attrs.tier, attrs: attrs}}
  end

  # Points `key` at `module` for this test only, as a host would at runtime.
  defp configure(key, module) do
    previous = OpenAgentsPolicy.Host.configure([{key, module}])
    on_exit(fn -> OpenAgentsPolicy.Host.configure(previous) end)
  end

  @repository %{id: "repo-1"}
  @user_principal %{"type" => "user", "id" => "acct-1"}

  describe "the configured :accounts module" do
    test "decides who viewer/2 calls an operator" do
      configure(:accounts, BossAccounts)

      assert WorkDisclosure.viewer(@repository, %User{id: "boss"}) ==
               %{account_id: "boss", tier: :glass, admin: true}

      # The default stand-in would call this user an operator; the configured module does not.
      assert WorkDisclosure.viewer(@repository, %User{id: "u", admin: true}) ==
               %{account_id: "u", tier: :pulse}
    end

    test "decides a User viewer's tier on the ladder and in the schedule" do
      configure(:accounts, BossAccounts)
      boss = %User{id: "boss"}
      link = %ArtifactLink{account_id: "acct-1", tier: "pulse", revoked_at: nil}

      assert Ladder.viewer_tier(boss) == :glass
      assert Ladder.effective_tier(link, boss) == :glass
      assert Ladder.allows?(link, :full, boss)
      assert WorkDisclosure.effective_tier(%{artifact_link: link}, boss) == :glass

      assert WorkDisclosure.fields_at(:work_job, boss) ==
               WorkDisclosure.fields_at(:work_job, :glass)
    end

    test "an operator User is not raised on an unlinked record: only the operator descriptor is" do
      configure(:accounts, BossAccounts)
      record = %{transparency_tier: "pulse", artifact_link: nil}

      assert WorkDisclosure.effective_tier(record, %User{id: "boss"}) == :pulse

      assert WorkDisclosure.effective_tier(
               record,
               WorkDisclosure.viewer(@repository, %User{id: "boss"})
             ) ==
               :glass
    end

    test "a truthy answer counts as yes" do
      configure(:accounts, TruthyAccounts)

      assert WorkDisclosure.viewer(@repository, %User{id: "u"}) ==
               %{account_id: "u", tier: :glass, admin: true}

      assert Ladder.viewer_tier(%User{id: "u"}) == :glass
    end

    test "is asked only about users" do
      configure(:accounts, RaisingAccounts)

      assert WorkDisclosure.viewer(@repository, nil) == %{account_id: nil, tier: :pulse}

      assert WorkDisclosure.viewer(@repository, %{id: "u", admin: true}) == %{
               account_id: nil,
               tier: :pulse
             }

      assert WorkDisclosure.fields_at(:trace, %{account_id: "a", tier: :pulse}) != []
      assert WorkDisclosure.project(:trace, %{id: 1}, :ledger).id == 1

      assert WorkDisclosure.effective_tier(%{transparency_tier: "ledger"}, %{admin: true}) ==
               :glass

      assert Ladder.clamp(:glass, "pulse") == :pulse
      assert_raise RuntimeError, ~r/admin\?/, fn -> Ladder.viewer_tier(%User{id: "u"}) end
    end
  end

  describe "the configured :repositories module" do
    test "decides who viewer/2 calls a member" do
      configure(:repositories, EveryoneIsAMember)

      assert WorkDisclosure.viewer(@repository, %User{id: "u"}) == %{
               account_id: "u",
               tier: :ledger
             }
    end

    test "a nil answer is not membership" do
      configure(:repositories, NilMembership)

      assert WorkDisclosure.viewer(@repository, %User{id: "u", member_of: ["repo-1"]}) ==
               %{account_id: "u", tier: :pulse}
    end

    test "is not asked about an operator or about no user" do
      configure(:repositories, RaisingRepositories)

      assert WorkDisclosure.viewer(@repository, %User{id: "op", admin: true}).tier == :glass
      assert WorkDisclosure.viewer(@repository, nil).tier == :pulse

      assert_raise RuntimeError, ~r/member\?/, fn ->
        WorkDisclosure.viewer(@repository, %User{id: "u"})
      end
    end
  end

  describe "the configured :repo and :artifact_link modules" do
    test "link_for_attempt/3 inserts through the configured repo and returns its answer" do
      configure(:repo, RefusingRepo)

      assert {:error, %Changeset{data: %ArtifactLink{}, changes: changes}} =
               WorkDisclosure.link_for_attempt(@repository, @user_principal, %{})

      assert changes.account_id == "acct-1"
      assert_received {:refusing_repo, %Changeset{}}
      refute_received {:repo_insert, _}
    end

    test "link_for_attempt/3 builds the changeset with the configured ArtifactLink" do
      configure(:artifact_link, OtherLink)
      configure(:repo, OtherRepo)

      assert {:ok, %OtherLink{id: "other-1", account_id: "acct-1", tier: "ledger", attrs: attrs}} =
               WorkDisclosure.link_for_attempt(@repository, @user_principal)

      assert attrs.repository_id == "repo-1"
      assert attrs.consent == %{"granted_by" => "requesting_principal"}
    end

    test "no repo is called for an attempt that gets no link" do
      configure(:repo, RaisingRepo)

      assert WorkDisclosure.link_for_attempt(@repository, %{"type" => "agent", "id" => "a"}) ==
               :none

      assert WorkDisclosure.link_for_attempt(%{}, @user_principal) == :none
    end
  end
end
