defmodule OpenAgentsPolicy.LargeIdsTest do
  # Ownership compares a link's account id with the viewer's. Ids too large to
  # compare within a normal scheduler's slice (a binary past 256 KiB, a list,
  # a tuple, a map, a bignum) move the call to a dirty scheduler; the answer
  # must be the one a small id gets.
  use ExUnit.Case, async: true

  alias OpenAgents.Accounts.User
  alias OpenAgents.Transparency.{ArtifactLink, Ladder, WorkDisclosure}

  @big :binary.copy("a", 256 * 1024 + 1)

  defp link(owner, revoked_at),
    do: %ArtifactLink{account_id: owner, tier: "ledger", revoked_at: revoked_at}

  # Each large id, a copy of it (equal, not the same term), and a different id
  # of the same kind.
  defp ids do
    [
      {@big, :binary.copy(@big), @big <> "b"},
      {Enum.to_list(1..100_000), Enum.to_list(1..100_000), Enum.to_list(2..100_001)},
      {{:id, @big}, {:id, :binary.copy(@big)}, {:id, "small"}},
      {%{id: 1}, %{id: 1}, %{id: 2}},
      {Integer.pow(2, 4096), Integer.pow(2, 4096), Integer.pow(2, 4096) + 1}
    ]
  end

  test "a large owner reads glass through the link; another reader the link's tier, clamped" do
    for {owner, same, other} <- ids(), revoked_at <- [nil, ~U[2026-08-25 10:00:00Z]] do
      record = %{artifact_link: link(owner, revoked_at), transparency_tier: "pulse"}
      owned = if revoked_at, do: :dark, else: :glass
      clamped = if revoked_at, do: :dark, else: :ledger

      for viewer <- [%{account_id: same, tier: :pulse}, %User{id: same}] do
        assert WorkDisclosure.effective_tier(record, viewer) == owned
        assert Ladder.effective_tier(record.artifact_link, viewer) == owned
        assert Ladder.allows?(record.artifact_link, :full, viewer) == (owned == :glass)
      end

      viewer = %{account_id: other, tier: :glass}
      assert WorkDisclosure.effective_tier(record, viewer) == clamped
      assert Ladder.effective_tier(record.artifact_link, viewer) == clamped
      assert Ladder.allows?(record.artifact_link, :content, viewer) == (clamped == :ledger)
    end
  end
end
