defmodule HostApp.AttemptsTest do
  use ExUnit.Case, async: true

  alias HostApp.{Attempts, AttemptsPage, Fixtures}
  alias OpenAgents.Transparency.{ArtifactLink, WorkDisclosure}

  setup do
    Fixtures.world()
  end

  defp links_of(repository),
    do: Enum.filter(OpenAgents.Repo.all(ArtifactLink), &(&1.repository_id == repository.id))

  test "the library inserts through the configured repo" do
    assert Application.fetch_env!(:openagents_policy, :repo) == OpenAgents.Repo
    assert Application.fetch_env!(:openagents_policy, :artifact_link) == ArtifactLink
  end

  test "a user's attempt gets a ledger link it owns, stored by the repo", %{
    repository: repository,
    readers: readers
  } do
    authority = %{"scope" => "forge:attempt"}
    principal = %{"type" => "user", "id" => readers.owner.id}

    assert {:ok, attempt} =
             Attempts.create(repository, principal, %{id: Fixtures.id()}, authority)

    assert %ArtifactLink{} = link = attempt.artifact_link
    assert is_binary(link.id)
    assert %DateTime{} = link.inserted_at

    assert %{
             account_id: account_id,
             repository_id: repository_id,
             artifact_type: "attempt",
             artifact_ref: "id",
             tier: "ledger",
             consent: %{"granted_by" => "requesting_principal"},
             authority_snapshot: ^authority,
             revoked_at: nil
           } = link

    assert account_id == readers.owner.id
    assert repository_id == repository.id
    assert attempt.artifact_link_id == link.id
    assert OpenAgents.Repo.get(ArtifactLink, link.id) == link
    assert links_of(repository) == [link]
    assert OpenAgents.Repo.get(OpenAgents.Forge.Assignment, attempt.id) == attempt
  end

  test "an agent's attempt gets :none and nothing is inserted", %{repository: repository} do
    principal = %{"type" => "agent", "id" => "agent-7"}
    assert WorkDisclosure.link_for_attempt(repository, principal, %{}) == :none
    assert WorkDisclosure.link_for_attempt(repository, principal) == :none
    # A user principal without a binary id names no account either.
    assert WorkDisclosure.link_for_attempt(repository, %{"type" => "user", "id" => 42}, %{}) ==
             :none

    assert WorkDisclosure.link_for_attempt(repository, nil, %{}) == :none

    assert {:ok, attempt} = Attempts.create(repository, principal, %{id: Fixtures.id()})
    assert attempt.artifact_link == nil
    assert attempt.artifact_link_id == nil
    assert links_of(repository) == []
  end

  test "the minted link raises its owner to glass until it is revoked, then hides it from everyone",
       %{repository: repository, readers: readers} do
    principal = %{"type" => "user", "id" => readers.owner.id}

    {:ok, attempt} =
      Attempts.create(repository, principal, %{id: Fixtures.id(), work_job: Fixtures.job()})

    issue = fn attempt -> [%{id: "issue-1", attempts: [attempt]}] end

    %{issues: [%{attempts: [row]}]} =
      AttemptsPage.render(repository, readers.owner, issue.(attempt))

    assert row.tier == :glass
    assert row.work_job.report =~ "off-by-one"

    %{issues: [%{attempts: [row]}]} =
      AttemptsPage.render(repository, readers.stranger, issue.(attempt))

    assert row.tier == :pulse

    assert {:ok, revoked} = Attempts.revoke(attempt.artifact_link, "requester withdrew consent")
    assert %DateTime{} = OpenAgents.Repo.get(ArtifactLink, revoked.id).revoked_at
    attempt = %{attempt | artifact_link: OpenAgents.Repo.get(ArtifactLink, revoked.id)}

    for reader <- Map.values(readers) do
      assert %{issues: [%{attempts: []}]} =
               AttemptsPage.render(repository, reader, issue.(attempt))
    end
  end

  test "a link the host's changeset refuses comes back as {:error, changeset}", %{
    readers: readers
  } do
    principal = %{"type" => "user", "id" => readers.owner.id}

    assert {:error, %HostApp.Changeset{valid?: false, errors: errors}} =
             WorkDisclosure.link_for_attempt(%{id: nil}, principal, %{})

    assert {:repository_id, "can't be blank"} in errors
    refute Enum.any?(OpenAgents.Repo.all(ArtifactLink), &(&1.account_id == readers.owner.id))
  end
end
