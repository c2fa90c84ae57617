defmodule OpenAgentsPolicy.HostStructsTest do
  # A host with its own module names: its link and user structs are honoured
  # for minting, effective tiers, projections, viewer/2 and the ladder, and
  # revocation darkens what its own links govern. async: the modules are set
  # with `Host.override/1`, which no neighbour sees.
  use ExUnit.Case, async: true

  alias OpenAgents.Transparency.{Ladder, WorkDisclosure}
  alias OpenAgentsPolicy.Host

  defmodule Link do
    @moduledoc false
    @behaviour OpenAgentsPolicy.Host.ArtifactLink
    defstruct [:id, :account_id, :repository_id, :artifact_type, :artifact_ref, :tier] ++
                [:consent, :authority_snapshot, :revoked_at, :revocation_tombstone]

    def changeset(link, attrs), do: {:changeset, struct(link, attrs)}
  end

  defmodule User do
    @moduledoc false
    defstruct [:id, operator: false, repositories: []]
  end

  defmodule Accounts do
    @moduledoc false
    @behaviour OpenAgentsPolicy.Host.Accounts
    def admin?(%User{operator: operator}), do: operator
    def admin?(_other), do: false
  end

  defmodule Repositories do
    @moduledoc false
    @behaviour OpenAgentsPolicy.Host.Repositories
    def member?(%{id: id}, %User{repositories: ids}), do: id in ids
    def member?(_repository, _user), do: false
  end

  defmodule Repo do
    @moduledoc false
    @behaviour OpenAgentsPolicy.Host.Repo
    def insert({:changeset, link}), do: {:ok, %{link | id: "my-link-1"}}
  end

  @repository %{id: "repo-1"}
  @owner struct(User, id: "acct-owner")
  @member struct(User, id: "acct-member", repositories: ["repo-1"])
  @stranger struct(User, id: "acct-stranger")
  @operator struct(User, id: "acct-op", operator: true)

  setup do
    Host.override(
      artifact_link: Link,
      user: User,
      accounts: Accounts,
      repositories: Repositories,
      repo: Repo
    )
  end

  defp attempt(link), do: %{transparency_tier: "ledger", artifact_link: link, id: "attempt-1"}

  defp tiers(record) do
    for user <- [nil, @stranger, @member, @owner, @operator] do
      WorkDisclosure.effective_tier(record, WorkDisclosure.viewer(@repository, user))
    end
  end

  test "minting, effective tiers and revocation, end to end, with the host's own structs" do
    {:ok, link} =
      WorkDisclosure.link_for_attempt(@repository, %{"type" => "user", "id" => @owner.id})

    assert %Link{id: "my-link-1", account_id: "acct-owner", tier: "ledger", revoked_at: nil} =
             link

    # The owner and an operator at glass through the link; a member at the
    # link's ledger; anyone else at pulse.
    record = attempt(link)
    assert tiers(record) == [:pulse, :pulse, :ledger, :glass, :glass]

    # The user struct itself as the viewer, as the ladder reads one.
    assert WorkDisclosure.effective_tier(record, @owner) == :glass
    assert WorkDisclosure.effective_tier(record, @operator) == :glass

    assert WorkDisclosure.fields_at(:work_job, @operator) ==
             WorkDisclosure.fields_at(:work_job, :glass)

    assert WorkDisclosure.fields_at(:work_job, @owner) == WorkDisclosure.fields_at(:work_job, nil)
    assert Ladder.effective_tier(link, @owner) == :glass
    assert Ladder.viewer_tier(@operator) == :glass
    assert Ladder.allows?(link, :full, %{account_id: "acct-owner"})

    # Revoked: dark for everyone, the owner and operators included.
    revoked = %{link | revoked_at: ~U[2026-11-30 12:00:00Z]}
    assert tiers(attempt(revoked)) == [:dark, :dark, :dark, :dark, :dark]
    assert WorkDisclosure.effective_tier(attempt(revoked), @operator) == :dark
    assert Ladder.effective_tier(revoked, @operator) == :dark
    refute Ladder.allows?(revoked, :metadata, @owner)

    assert WorkDisclosure.project(
             :attempt,
             %{id: 1},
             WorkDisclosure.effective_tier(attempt(revoked), @owner)
           ) == nil
  end

  test "the default names stay recognised beside a host's own" do
    default_link = %OpenAgents.Transparency.ArtifactLink{
      account_id: "acct-owner",
      tier: "glass",
      revoked_at: ~U[2026-11-30 12:00:00Z]
    }

    # Still a link: revoked, it is dark for everyone, the column unread.
    assert tiers(attempt(default_link)) == [:dark, :dark, :dark, :dark, :dark]
    live = %{default_link | revoked_at: nil, tier: "ledger"}
    assert tiers(attempt(live)) == [:pulse, :pulse, :ledger, :glass, :glass]

    # Still a user, whom this host's own Accounts and Repositories are asked about.
    default_user = %OpenAgents.Accounts.User{id: "acct-owner", admin: false}

    assert WorkDisclosure.viewer(@repository, default_user) == %{
             account_id: "acct-owner",
             tier: :pulse
           }

    assert WorkDisclosure.effective_tier(
             attempt(%Link{account_id: "acct-owner", tier: "ledger"}),
             default_user
           ) == :glass

    assert Ladder.viewer_tier(default_user) == nil
  end

  test "the structs follow the configuration from the next call" do
    {:ok, link} =
      WorkDisclosure.link_for_attempt(@repository, %{"type" => "user", "id" => @owner.id})

    revoked = attempt(%{link | revoked_at: ~U[2026-11-30 12:00:00Z]})
    assert WorkDisclosure.effective_tier(revoked, %{tier: :ledger}) == :dark

    # Back to the default names: this host's struct is no longer a link.
    Host.override(artifact_link: nil, user: nil)
    assert WorkDisclosure.effective_tier(revoked, %{tier: :ledger}) == :ledger
    assert WorkDisclosure.viewer(@repository, @owner) == %{account_id: nil, tier: :pulse}

    Host.override(artifact_link: Link, user: User)
    assert WorkDisclosure.effective_tier(revoked, %{tier: :ledger}) == :dark

    assert WorkDisclosure.viewer(@repository, @member) == %{
             account_id: "acct-member",
             tier: :ledger
           }
  end
end
