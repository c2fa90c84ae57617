defmodule OpenAgentsPolicy.LargeIdsTest do
  # Ownership compares a link's account id with the viewer's. Ids too large to
  # compare within a normal scheduler's slice (a binary past 256 KiB, a list,
  # a tuple, a map, a bignum) move the call to a dirty scheduler; the answer
  # must be the one a small id gets.
  use ExUnit.Case, async: true

  alias OpenAgents.Accounts.User
  alias OpenAgents.Transparency.{ArtifactLink, Ladder, WorkDisclosure}
  alias OpenAgentsPolicy.Native

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

  # The property behind the answers above: a normal scheduler never compares
  # a large id. Each call that compares ids has a `_normal` NIF, which
  # answers `:dirty` (having compared nothing) when a comparison would go
  # dirty (past `DIRTY_COMPARE_BYTES`), and a `_dirty` NIF, which answers.
  test "the normal-scheduler NIFs answer :dirty for a large comparison; their `_dirty` NIFs make it" do
    for {owner, same, _other} <- ids() do
      link = link(owner, nil)
      viewer = %{account_id: same, tier: :pulse}

      assert Native.effective_tier_normal(link, nil, viewer, false) == :dirty
      assert Native.effective_tier_dirty(link, nil, viewer, false) == :glass
      assert Native.linked_tier_normal(owner, "ledger", nil, viewer, false) == :dirty
      assert Native.linked_tier_dirty(owner, "ledger", nil, viewer, false) == :glass
      assert Native.ladder_effective_tier_normal(link, viewer, false) == :dirty
      assert Native.ladder_effective_tier_dirty(link, viewer, false) == :glass
      assert Native.ladder_allows_normal(link, :full, viewer, false) == :dirty
      assert Native.ladder_allows_dirty(link, :full, viewer, false) == true
    end

    # Small ids are compared where the call is made.
    small = link("acct-1", nil)
    viewer = %{account_id: "acct-1", tier: :pulse}
    assert Native.effective_tier_normal(small, nil, viewer, false) == :glass
    assert Native.linked_tier_normal("acct-1", "ledger", nil, viewer, false) == :glass
    assert Native.ladder_effective_tier_normal(small, viewer, false) == :glass
    assert Native.ladder_allows_normal(small, :full, viewer, false) == true
  end
end
