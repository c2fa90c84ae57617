defmodule OpenAgents.Transparency.WorkDisclosureRowsTest do
  # visibility/1, what where_visible/2 builds its query from, held to
  # effective_tier/2 over every record shape and tier value, for every kind
  # of viewer: the query's half that needs no database (the example host's
  # suite runs the query itself on PostgreSQL).
  use ExUnit.Case, async: true

  alias OpenAgents.Accounts.User
  alias OpenAgents.Transparency.{ArtifactLink, Ladder, WorkDisclosure}
  alias OpenAgentsPolicy.Host.Boundary

  @words Enum.map(Ladder.tiers(), &Atom.to_string/1)
  @values @words ++ ["GLASS", "", "bogus", String.duplicate("glass", 13), nil]
  @viewers [nil, %{admin: true}, %{account_id: "a"}, %{account_id: nil}, "ledger", :bogus] ++
             for(tier <- Ladder.tiers() ++ [nil, "bogus"], do: %{account_id: "a", tier: tier}) ++
             [%{tier: :glass}, %User{id: "a"}, %User{id: "a", admin: true}]
  @revoked_at ~U[2026-08-25 12:00:00Z]

  # Whether `value` is among the tier values `values` describes.
  defp among?(%{words: words, other: other, none: none}, value) do
    cond do
      value in words -> true
      value in @words -> false
      is_binary(value) and byte_size(value) <= 64 -> other
      true -> none
    end
  end

  defp link(account, tier, revoked_at),
    do: %ArtifactLink{account_id: account, tier: tier, revoked_at: revoked_at}

  test "each shape's values are exactly those effective_tier/2 does not call dark" do
    for viewer <- @viewers, value <- @values do
      seen = WorkDisclosure.visibility(viewer)
      {_class, account} = Boundary.viewer(viewer)
      assert seen.account == account

      shapes = [
        column: %{artifact_link: nil, transparency_tier: value},
        link: %{artifact_link: link("someone else", value, nil)},
        revoked_link: %{artifact_link: link(account, value, @revoked_at)}
      ]

      shapes =
        if account,
          do: [{:own_link, %{artifact_link: link(account, value, nil)}} | shapes],
          else: shapes

      for {shape, record} <- shapes do
        lit? = WorkDisclosure.effective_tier(record, viewer) != :dark

        assert among?(seen[shape], value) == lit?,
               "#{inspect(viewer)}, #{shape} #{inspect(value)}"
      end
    end
  end
end
