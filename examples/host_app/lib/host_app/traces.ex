defmodule HostApp.Traces do
  @moduledoc """
  The trajectories recorded for an issue's attempts, per reader.

  A trace has no tier column and no link of its own; this example discloses
  it at the effective tier of the attempt it belongs to (so a revoked attempt
  link hides its trace too), and only when its `visibility` is not
  `"private"` (the uploader's consent; the tier is the gate, `visibility` is
  never a published field). The source carries the whole `document`, from
  which `schema_version` and `step_count` are read; the projection must never
  publish it.
  """
  alias OpenAgents.Forge.Assignment
  alias OpenAgents.Traces.Trace
  alias OpenAgents.Transparency.WorkDisclosure

  @spec render(term(), term(), [{Assignment.t(), Trace.t()}]) :: [map()]
  def render(repository, user, traces) do
    viewer = WorkDisclosure.viewer(repository, user)
    Enum.flat_map(traces, fn {assignment, trace} -> row(assignment, trace, viewer) end)
  end

  @spec row(Assignment.t(), Trace.t(), map()) :: [map()]
  def row(_assignment, %Trace{visibility: "private"}, _viewer), do: []

  def row(%Assignment{id: id} = assignment, %Trace{assignment_id: id} = trace, viewer) do
    tier = WorkDisclosure.effective_tier(assignment, viewer)

    source =
      trace
      |> Map.from_struct()
      |> Map.merge(%{
        schema_version: Trace.schema_version(trace),
        step_count: Trace.step_count(trace),
        recorded_at: trace.inserted_at
      })

    case WorkDisclosure.project(:trace, source, tier) do
      nil -> []
      projected -> [projected]
    end
  end
end
