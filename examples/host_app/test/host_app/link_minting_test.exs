defmodule HostApp.LinkMintingTest do
  @moduledoc """
  `link_for_attempt/3` against the host's real changeset and repo: what the
  library hands `ArtifactLink.changeset/2` is exactly what PostgreSQL keeps,
  and what the changeset refuses comes back unchanged. Not async: it points
  the library at a recording repo for a while (`OpenAgentsPolicy.Host.configure/1`).
  """
  use HostApp.DataCase, async: false

  alias OpenAgents.Transparency.{ArtifactLink, WorkDisclosure}

  defmodule RecordingRepo do
    @moduledoc false
    # OpenAgents.Repo.insert/1, telling the test process what it was given and what it answered.
    def insert(changeset) do
      result = OpenAgents.Repo.insert(changeset)
      send(self(), {:insert, changeset, result})
      result
    end
  end

  setup :seeded

  setup do
    previous = OpenAgentsPolicy.Host.configure(repo: RecordingRepo)
    on_exit(fn -> OpenAgentsPolicy.Host.configure(previous) end)
  end

  @authority %{"scope" => "forge:attempt", "roots" => ["/home/owner/SECRET-root"]}

  test "the link persists exactly the attributes the library minted", ctx do
    principal = %{"type" => "user", "id" => ctx.readers.owner.id}

    assert {:ok, %ArtifactLink{} = link} =
             WorkDisclosure.link_for_attempt(ctx.world.repository, principal, @authority)

    assert_received {:insert, %Ecto.Changeset{valid?: true, changes: changes}, {:ok, ^link}}

    # The seed's attributes, and nothing else.
    assert changes == %{
             account_id: ctx.readers.owner.id,
             repository_id: ctx.world.repository.id,
             artifact_type: "attempt",
             artifact_ref: "id",
             tier: "ledger",
             consent: %{"granted_by" => "requesting_principal"},
             authority_snapshot: @authority
           }

    stored = Repo.get!(ArtifactLink, link.id)
    assert Map.take(stored, Map.keys(changes)) == changes
    assert %{revoked_at: nil, revocation_tombstone: nil} = stored
    assert %DateTime{} = stored.inserted_at
  end

  test "a unique-constraint failure comes back as {:error, changeset}, unchanged", ctx do
    principal = %{"type" => "user", "id" => ctx.readers.member.id}
    assert {:ok, _first} = WorkDisclosure.link_for_attempt(ctx.world.repository, principal)
    assert_received {:insert, _, {:ok, _}}
    count = Repo.aggregate(ArtifactLink, :count)

    # The second link to the same artifact ("attempt", "id") meets the index.
    result = WorkDisclosure.link_for_attempt(ctx.world.repository, principal)
    assert_received {:insert, _changeset, repo_answer}
    assert result === repo_answer
    assert {:error, %Ecto.Changeset{valid?: false} = changeset} = result
    assert changeset.errors[:artifact_type] |> elem(0) == "has already been taken"

    assert {:constraint, :unique} in Keyword.take(elem(changeset.errors[:artifact_type], 1), [
             :constraint
           ])

    assert Repo.aggregate(ArtifactLink, :count) == count
  end

  test "a changeset refusal (no such account) comes back the same way", ctx do
    principal = %{"type" => "user", "id" => Ecto.UUID.generate()}
    result = WorkDisclosure.link_for_attempt(ctx.world.repository, principal)
    assert_received {:insert, _changeset, repo_answer}
    assert result === repo_answer
    assert {:error, %Ecto.Changeset{errors: [account_id: {"does not exist", _}]}} = result

    # An id that is not a UUID is refused by the cast, before the database.
    assert {:error, %Ecto.Changeset{errors: [account_id: {"is invalid", _}]}} =
             WorkDisclosure.link_for_attempt(ctx.world.repository, %{
               "type" => "user",
               "id" => "u1"
             })
  end

  test "an agent's attempt, or a principal that names no account, mints nothing", ctx do
    for principal <- [
          %{"type" => "agent", "id" => "agent-7"},
          %{"type" => "user", "id" => 42},
          nil
        ] do
      assert WorkDisclosure.link_for_attempt(ctx.world.repository, principal, %{}) == :none
    end

    refute_received {:insert, _, _}
  end
end
