defmodule HostApp.InventoryTest do
  @moduledoc """
  `HostApp.Delegations.inventory/2` on Boxes and Computers loaded from
  PostgreSQL: 32 targets in every Box state and every Computer
  status/revocation/reachability mix, each served with the seam the library
  decides for it.
  """
  use HostApp.DataCase, async: true

  alias HostApp.{Delegations, Fixtures}
  alias OpenAgents.Box.ConversationBox
  alias OpenAgents.Delegations.Target

  setup do
    owner = Fixtures.user()
    # Every Box state and two words the vocabulary lacks, then computers.
    boxes =
      Enum.map(ConversationBox.states() ++ ["hibernating", "READY"], &Fixtures.box(owner, &1))

    mixes =
      for status <- ["active", "revoked"],
          revoked_at <- [nil, ~U[2026-08-01 00:00:00Z]],
          online? <- [true, false],
          do: {status, revoked_at, online?}

    computers =
      mixes
      |> Stream.cycle()
      |> Enum.take(32 - length(boxes))
      |> Enum.map(fn {status, revoked_at, online?} ->
        %{machine: Fixtures.machine(owner, status, revoked_at), online?: online?}
      end)

    %{owner: owner, stranger: Fixtures.user(), targets: boxes ++ computers}
  end

  defp expected_lifecycle(%{machine: machine, online?: online?}),
    do: Target.computer_lifecycle(machine, online?)

  defp expected_lifecycle(box), do: Target.box_lifecycle(box.state)

  defp kind(%{machine: _}), do: "computer"
  defp kind(_box), do: "box"

  for reader <- [:owner, :stranger, :anonymous] do
    @reader reader
    test "32 targets are served the library's seam for the #{reader}", ctx do
      user_id = ctx[@reader] && ctx[@reader].id
      assert {:ok, entries} = Delegations.inventory(ctx.targets, user_id)
      assert length(entries) == 32

      for {target, entry} <- Enum.zip(ctx.targets, entries) do
        kind = kind(target)
        lifecycle = expected_lifecycle(target)
        authorized? = @reader == :owner

        assert Enum.sort(Map.keys(entry)) == ~w(ref seam substrate_state)
        assert entry["ref"] =~ ~r/^#{kind}:[0-9a-f-]{36}$/
        assert entry["seam"] == Target.seam(kind, lifecycle, authorized?), inspect(target)
        # Only the owner is offered anything.
        if not authorized?, do: assert(entry["seam"]["capabilities"] == [])
      end
    end
  end

  test "more than 32 targets is refused, not truncated", ctx do
    extra = Fixtures.box(ctx.owner, "idle")

    assert Delegations.inventory(ctx.targets ++ [extra], ctx.owner.id) ==
             {:error, {:too_many_targets, 33}}
  end
end
