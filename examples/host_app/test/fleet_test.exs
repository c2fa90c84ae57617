defmodule HostApp.FleetTest do
  use ExUnit.Case, async: true

  alias HostApp.{Fixtures, Fleet, SeedRules}

  # Every job status, plus the in-flight cancel word the vocabulary lacks.
  @statuses SeedRules.job_statuses() ++ ["stopping"]

  defp fleet(reach, extra \\ 0) do
    box_states = SeedRules.box_states() ++ ["queued"]

    computers =
      for n <- 0..(31 + extra) do
        machine = Fixtures.machine(%{status: if(rem(n, 5) == 4, do: "revoked", else: "active")})
        status = Enum.at(@statuses, rem(n, length(@statuses)))

        %{
          machine: machine,
          online?: rem(n, 3) != 0,
          latest_job: Fixtures.job(%{status: status, machine_id: machine.id})
        }
      end

    %{
      reach: reach,
      boxes:
        Enum.map(0..(9 + extra), fn n ->
          %{id: Fixtures.id(), state: Enum.at(box_states, rem(n, length(box_states)))}
        end),
      queued: Enum.map(0..(99 + extra), fn _ -> %{id: Fixtures.id()} end),
      computers: computers
    }
  end

  test "a panel renders 10 boxes, 100 queued items and 32 computers with their latest jobs" do
    fleet = fleet(%{"box" => true, "computer" => true})
    panel = Fleet.panel(fleet)

    assert length(panel.boxes) == 10
    assert length(panel.queued) == 100
    assert length(panel.computers) == 32
    assert panel.hidden == %{boxes: 0, queued: 0, computers: 0}

    for {box, entry} <- Enum.zip(fleet.boxes, panel.boxes) do
      lifecycle = SeedRules.box_lifecycle(box.state)
      assert entry["ref"] == "box:" <> box.id
      assert entry["lifecycle"] == lifecycle
      assert entry["custody"] == "openagents_managed"
      assert entry["runtime_class"] == nil
      assert entry["capabilities"] == SeedRules.capabilities(lifecycle, true)
    end

    # A fan-out item not yet admitted is the only thing that reads `queued`,
    # and nothing can be started on it.
    for entry <- panel.queued do
      assert entry["lifecycle"] == "queued"
      assert entry["substrate_state"] == "queued"
      assert entry["capabilities"] == []
      assert entry["unavailable_reason"] == "queued"
      assert entry["custody"] == "openagents_managed"
    end

    for {computer, entry} <- Enum.zip(fleet.computers, panel.computers) do
      lifecycle = SeedRules.computer_lifecycle(computer.machine, computer.online?)
      assert entry["lifecycle"] == lifecycle
      assert entry["custody"] == "customer_premises"
      assert entry["runtime_class"] == "connected"
      assert entry["capabilities"] == SeedRules.capabilities(lifecycle, true)

      job = computer.latest_job
      delegation = SeedRules.job_lifecycle(job.status)

      assert entry["delegation"] == %{
               "lifecycle" => delegation,
               "capabilities" => if(SeedRules.cancellable?(delegation), do: ["cancel"], else: []),
               "job_id" => job.id,
               "status" => job.status
             }
    end
  end

  test "a job whose cancel is in flight (stopping) reads failed and offers no cancel" do
    panel = Fleet.panel(fleet(%{"computer" => true}))
    stopping = Enum.filter(panel.computers, &(&1["delegation"]["status"] == "stopping"))
    assert stopping != []

    for entry <- stopping do
      assert entry["delegation"]["lifecycle"] == "failed"
      assert entry["delegation"]["capabilities"] == []
    end
  end

  test "an unauthorized caller sees the fleet but may start nothing" do
    panel = Fleet.panel(fleet(%{}))

    for entry <- panel.boxes ++ panel.queued ++ panel.computers do
      assert entry["capabilities"] == []

      if entry["lifecycle"] == "active",
        do: assert(entry["unavailable_reason"] == "not_authorized")
    end
  end

  test "past the caps nothing more is rendered, and the overflow is counted" do
    panel = Fleet.panel(fleet(%{"box" => true}, 3))
    assert {length(panel.boxes), length(panel.queued), length(panel.computers)} == {10, 100, 32}
    assert panel.hidden == %{boxes: 3, queued: 3, computers: 3}
  end
end
