defmodule HostApp.FleetTest do
  @moduledoc "The chat fleet panel on Boxes, Computers and jobs loaded from PostgreSQL."
  use HostApp.DataCase, async: true

  alias HostApp.{Fixtures, Fleet}
  alias OpenAgents.Box.ConversationBox
  alias OpenAgents.Delegations.Target
  alias OpenAgents.Work.Job

  # Every job status, plus the in-flight cancel word the vocabulary lacks.
  @statuses Job.statuses() ++ ["stopping"]

  defp fleet(user, reach, extra \\ 0) do
    box_states = ConversationBox.states() ++ ["queued"]

    computers =
      for n <- 0..(31 + extra) do
        machine = Fixtures.machine(user, if(rem(n, 5) == 4, do: "revoked", else: "active"))
        status = Enum.at(@statuses, rem(n, length(@statuses)))
        %{machine: machine, online?: rem(n, 3) != 0, latest_job: Fixtures.job(machine, status)}
      end

    %{
      reach: reach,
      boxes:
        for(
          n <- 0..(9 + extra),
          do: Fixtures.box(user, Enum.at(box_states, rem(n, length(box_states))))
        ),
      queued: for(_ <- 0..(99 + extra), do: %{id: Ecto.UUID.generate()}),
      computers: computers
    }
  end

  test "a panel renders 10 boxes, 100 queued items and 32 computers with their latest jobs" do
    fleet = fleet(Fixtures.user(), %{"box" => true, "computer" => true})
    panel = Fleet.panel(fleet)

    assert {length(panel.boxes), length(panel.queued), length(panel.computers)} == {10, 100, 32}
    assert panel.hidden == %{boxes: 0, queued: 0, computers: 0}

    for {box, entry} <- Enum.zip(fleet.boxes, panel.boxes) do
      assert entry["ref"] == "box:" <> box.id
      assert entry["seam"] == Target.seam("box", Target.box_lifecycle(box.state), true)
      assert entry["seam"]["custody"] == "openagents_managed"
      assert entry["seam"]["runtime_class"] == nil
    end

    # A fan-out item not yet admitted is the only thing that reads `queued`,
    # and nothing can be started on it.
    for entry <- panel.queued do
      assert entry["substrate_state"] == "queued"

      assert entry["seam"] == %{
               "lifecycle" => "queued",
               "capabilities" => [],
               "unavailable_reason" => "queued",
               "custody" => "openagents_managed",
               "runtime_class" => nil
             }
    end

    for {computer, entry} <- Enum.zip(fleet.computers, panel.computers) do
      lifecycle = Target.computer_lifecycle(computer.machine, computer.online?)
      assert entry["seam"] == Target.seam("computer", lifecycle, true)
      assert entry["seam"]["custody"] == "customer_premises"
      assert entry["seam"]["runtime_class"] == "connected"

      job = computer.latest_job

      assert entry["delegation"] == %{
               "job_id" => job.id,
               "status" => job.status,
               "seam" => job.status |> Target.job_lifecycle() |> Target.delegation_seam()
             }
    end
  end

  test "a job whose cancel is in flight (stopping) reads failed and offers nothing" do
    panel = Fleet.panel(fleet(Fixtures.user(), %{}))

    for %{"delegation" => %{"status" => "stopping"} = delegation} <- panel.computers do
      assert delegation["seam"] == %{"lifecycle" => "failed", "capabilities" => []}
    end

    assert Enum.any?(panel.computers, &(&1["delegation"]["status"] == "stopping"))
  end

  test "an unauthorized caller sees the fleet but may start nothing" do
    panel = Fleet.panel(fleet(Fixtures.user(), %{}))

    for entry <- panel.boxes ++ panel.queued ++ panel.computers do
      assert entry["seam"]["capabilities"] == []

      if entry["seam"]["lifecycle"] == "active",
        do: assert(entry["seam"]["unavailable_reason"] == "not_authorized")
    end
  end

  test "past the caps nothing more is rendered, and the overflow is counted" do
    panel = Fleet.panel(fleet(Fixtures.user(), %{"box" => true}, 3))
    assert {length(panel.boxes), length(panel.queued), length(panel.computers)} == {10, 100, 32}
    assert panel.hidden == %{boxes: 3, queued: 3, computers: 3}
  end
end
