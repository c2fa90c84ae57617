defmodule OpenAgentsPolicy.LargeIdsTest do
  # Ownership compares a link's account id with the viewer's, in Elixir, with
  # `==` (as the host compares them): no account id crosses into a NIF, so a
  # large one (a binary past 256 KiB, a list, a tuple, a map, a bignum) holds
  # no normal scheduler in a NIF, and gets the answer a small id gets.
  use ExUnit.Case, async: true

  alias OpenAgents.Accounts.User
  alias OpenAgents.Transparency.{ArtifactLink, Ladder, WorkDisclosure}
  alias OpenAgentsPolicy.Test.NifTrace

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

  # The property behind the answers above: what the NIF is handed is the
  # typed boundary's small terms (a viewer's class, a link's state, tier and
  # ownership), never an account id, however large.
  test "no account id reaches a NIF: the calls hand it only small typed terms" do
    for {owner, same, other} <- ids(), account <- [same, other], revoked_at <- [nil, :now] do
      link = %{link(owner, revoked_at) | tier: "bogus"}

      calls = [
        fn -> WorkDisclosure.effective_tier(%{artifact_link: link}, %{account_id: account}) end,
        fn -> WorkDisclosure.effective_tier(%{transparency_tier: link}, %User{id: account}) end,
        fn -> Ladder.effective_tier(link, %{account_id: account, tier: "bogus"}) end,
        fn -> Ladder.allows?(link, :full, %User{id: account}) end
      ]

      for call <- calls do
        {_answer, called} = NifTrace.traced(call)

        for {name, args} <- called do
          assert {bytes, depth, width} = NifTrace.largest(args)
          assert bytes <= 64 and depth <= 4 and width <= 4, "#{name}: #{inspect(args, limit: 5)}"
        end
      end
    end
  end
end
