defmodule HostApp.Fleet do
  @moduledoc """
  The chat fleet panel, calling the library the way the host's panel does per
  render: up to 10 boxes, 100 queued fan-out items (the synthetic `queued`
  state) and 32 computers, each through its lifecycle projection and one
  `seam/3`, plus one `delegation_seam/1` of `job_lifecycle/1` for each
  computer's latest job.

  `fleet` is `%{reach: %{"box" => bool, "computer" => bool}, boxes: [%{id,
  state}], queued: [%{id}], computers: [%{machine, online?, latest_job}]}`.
  What is past a cap is not rendered; `hidden` counts it.
  """
  alias OpenAgents.Delegations.Target
  alias OpenAgents.Work.Job
  alias HostApp.Delegations

  @caps %{boxes: 10, queued: 100, computers: 32}

  @spec caps() :: map()
  def caps, do: @caps

  @spec panel(map()) :: map()
  def panel(%{reach: reach} = fleet) do
    {boxes, hidden_boxes} = cap(Map.get(fleet, :boxes, []), @caps.boxes)
    {queued, hidden_queued} = cap(Map.get(fleet, :queued, []), @caps.queued)
    {computers, hidden_computers} = cap(Map.get(fleet, :computers, []), @caps.computers)

    %{
      boxes: Enum.map(boxes, &Delegations.entry(Map.put(&1, :kind, "box"), reach)),
      queued:
        Enum.map(queued, fn item ->
          Delegations.entry(%{kind: "box", id: item.id, state: "queued"}, reach)
        end),
      computers: Enum.map(computers, &computer(&1, reach)),
      hidden: %{boxes: hidden_boxes, queued: hidden_queued, computers: hidden_computers}
    }
  end

  defp computer(%{machine: machine, online?: online?} = computer, reach) do
    target = Delegations.entry(%{kind: "computer", machine: machine, online?: online?}, reach)
    Map.put(target, "delegation", delegation(Map.get(computer, :latest_job)))
  end

  # The job's own status travels beside the unified word, as the substrate
  # state does beside a target's lifecycle.
  defp delegation(%Job{id: id, status: status}) do
    status
    |> Target.job_lifecycle()
    |> Target.delegation_seam()
    |> Map.merge(%{"job_id" => id, "status" => status})
  end

  defp delegation(nil), do: nil

  defp cap(list, n) do
    {shown, rest} = Enum.split(list, n)
    {shown, length(rest)}
  end
end
