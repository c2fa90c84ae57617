defmodule HostApp.Fleet do
  @moduledoc """
  The chat fleet panel, calling the library the way the host's panel does per
  render: up to 10 boxes, 100 queued fan-out items (the synthetic `queued`
  state) and 32 computers, each through its lifecycle projection and one
  `seam/3`, plus one `delegation_seam/1` of `job_lifecycle/1` for each
  computer's latest job.

  `fleet` is `%{reach: %{"box" => bool, "computer" => bool}, boxes:
  [%ConversationBox{}], queued: [%{id}], computers: [%{machine, online?,
  latest_job}]}`, records as loaded from the database. What is past a cap is
  not rendered; `hidden` counts it.
  """
  alias HostApp.Delegations
  alias OpenAgents.Delegations.Target
  alias OpenAgents.Work.Job

  @caps %{boxes: 10, queued: 100, computers: 32}

  @doc "How many of each kind one render shows."
  @spec caps() :: %{boxes: pos_integer(), queued: pos_integer(), computers: pos_integer()}
  def caps, do: @caps

  @doc "The panel: one entry per shown target, and the count of those past the caps."
  @spec panel(map()) :: map()
  def panel(%{reach: reach} = fleet) do
    {boxes, hidden_boxes} = Enum.split(Map.get(fleet, :boxes, []), @caps.boxes)
    {queued, hidden_queued} = Enum.split(Map.get(fleet, :queued, []), @caps.queued)
    {computers, hidden_computers} = Enum.split(Map.get(fleet, :computers, []), @caps.computers)

    %{
      boxes: Enum.map(boxes, &Delegations.entry(&1, Map.get(reach, "box", false))),
      queued:
        Enum.map(queued, fn item ->
          Delegations.entry(
            %{kind: "box", id: item.id, state: "queued"},
            Map.get(reach, "box", false)
          )
        end),
      computers: Enum.map(computers, &computer(&1, Map.get(reach, "computer", false))),
      hidden: %{
        boxes: length(hidden_boxes),
        queued: length(hidden_queued),
        computers: length(hidden_computers)
      }
    }
  end

  defp computer(computer, authorized?) do
    computer
    |> Delegations.entry(authorized?)
    |> Map.put("delegation", delegation(Map.get(computer, :latest_job)))
  end

  # The job's own status travels beside the unified word, as the substrate
  # state does beside a target's lifecycle.
  defp delegation(%Job{id: id, status: status}),
    do: %{"job_id" => id, "status" => status, "seam" => seam(status)}

  defp delegation(nil), do: nil

  @doc "A job status's `delegation_seam/1`, through `job_lifecycle/1`."
  @spec seam(String.t()) :: map()
  def seam(status), do: status |> Target.job_lifecycle() |> Target.delegation_seam()
end
