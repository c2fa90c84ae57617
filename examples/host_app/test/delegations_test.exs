defmodule HostApp.DelegationsTest do
  use ExUnit.Case, async: true

  alias HostApp.{Delegations, Fixtures, SeedRules}

  # 32 targets: every ConversationBox state, the synthetic queued, two words the
  # vocabulary lacks, and computers in every status/revocation/reachability mix.
  defp targets do
    boxes =
      Enum.map(SeedRules.box_states() ++ ["queued", "hibernating", "READY"], fn state ->
        %{kind: "box", id: Fixtures.id(), state: state}
      end)

    computer_cases =
      for status <- ["active", "revoked"],
          revoked_at <- [nil, ~U[2026-08-01 00:00:00Z]],
          online? <- [true, false],
          do: {status, revoked_at, online?}

    computers =
      Stream.cycle(computer_cases)
      |> Enum.take(32 - length(boxes))
      |> Enum.map(fn {status, revoked_at, online?} ->
        %{
          kind: "computer",
          machine: Fixtures.machine(%{status: status, revoked_at: revoked_at}),
          online?: online?
        }
      end)

    boxes ++ computers
  end

  defp expected_lifecycle(%{kind: "box", state: state}), do: SeedRules.box_lifecycle(state)

  defp expected_lifecycle(%{kind: "computer", machine: machine, online?: online?}),
    do: SeedRules.computer_lifecycle(machine, online?)

  defp ref(%{kind: "box", id: id}), do: "box:" <> id
  defp ref(%{kind: "computer", machine: machine}), do: "computer:" <> machine.id

  for reach <- [
        %{"box" => true, "computer" => true},
        %{"box" => true, "computer" => false},
        %{"box" => false, "computer" => true},
        %{}
      ] do
    @reach reach
    test "an inventory of 32 targets follows the seam rules for reach #{inspect(reach)}" do
      targets = targets()
      assert length(targets) == 32
      assert {:ok, entries} = Delegations.inventory(targets, @reach)
      assert length(entries) == 32

      for {target, entry} <- Enum.zip(targets, entries) do
        kind = target.kind
        lifecycle = expected_lifecycle(target)
        authorized? = Map.get(@reach, kind, false)

        assert Enum.sort(Map.keys(entry)) ==
                 Enum.sort(SeedRules.seam_keys() ++ ~w(kind ref substrate_state))

        assert entry["ref"] == ref(target)
        assert entry["kind"] == kind
        assert entry["custody"] == SeedRules.custody(kind)
        assert entry["runtime_class"] == SeedRules.runtime_class(kind)
        assert entry["lifecycle"] == lifecycle, "#{inspect(target)}"
        assert entry["capabilities"] == SeedRules.capabilities(lifecycle, authorized?)
        assert entry["unavailable_reason"] == SeedRules.unavailable_reason(lifecycle, authorized?)
      end
    end
  end

  test "the substrate's own state travels beside the unified word" do
    {:ok, entries} = Delegations.inventory(targets(), %{"box" => true})
    box = Enum.find(entries, &(&1["substrate_state"] == "provisioned"))
    assert box["lifecycle"] == "starting"
    assert box["capabilities"] == []
    assert box["unavailable_reason"] == "starting"
  end

  test "only error reads failed among Box states; idle, ready and running read active" do
    {:ok, entries} =
      SeedRules.box_states()
      |> Enum.map(&%{kind: "box", id: Fixtures.id(), state: &1})
      |> Delegations.inventory(%{"box" => true})

    by_state = Map.new(entries, &{&1["substrate_state"], &1["lifecycle"]})
    assert for({s, "failed"} <- by_state, do: s) == ["error"]
    assert Enum.sort(for {s, "active"} <- by_state, do: s) == ~w(idle ready running)
    assert Enum.all?(Map.values(by_state), &(&1 in OpenAgents.Delegations.Target.lifecycles()))
  end

  test "custody never varies with lifecycle or authority" do
    {:ok, a} = Delegations.inventory(targets(), %{"box" => true, "computer" => true})
    {:ok, b} = Delegations.inventory(targets(), %{})

    for entry <- a ++ b do
      assert entry["custody"] == SeedRules.custody(entry["kind"])
    end
  end

  test "an unauthorized caller is offered nothing, whatever the lifecycle" do
    {:ok, entries} = Delegations.inventory(targets(), %{"box" => false, "computer" => false})
    assert Enum.all?(entries, &(&1["capabilities"] == []))
    assert Enum.any?(entries, &(&1["unavailable_reason"] == "not_authorized"))
  end

  test "more than 32 targets is refused, not truncated" do
    too_many = Enum.map(1..33, fn _ -> %{kind: "box", id: Fixtures.id(), state: "idle"} end)
    assert Delegations.inventory(too_many, %{"box" => true}) == {:error, {:too_many_targets, 33}}
  end
end
