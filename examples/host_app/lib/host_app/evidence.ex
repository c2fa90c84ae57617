defmodule HostApp.Evidence do
  @moduledoc """
  An issue's receipt edges, per reader: one `viewer/2` per request, then per
  record `effective_tier/2` and `project(:evidence, ...)`. The source renames
  two columns the way the schedule says: `commit` from `commit_sha`,
  `recorded_at` from `inserted_at`. A dark edge leaves the list.
  """
  alias OpenAgents.Forge.IssueEvidence
  alias OpenAgents.Transparency.WorkDisclosure

  @spec render(term(), term(), [IssueEvidence.t()]) :: [map()]
  def render(repository, user, evidence) do
    viewer = WorkDisclosure.viewer(repository, user)
    Enum.flat_map(evidence, &row(&1, viewer))
  end

  @spec row(IssueEvidence.t(), map()) :: [map()]
  def row(%IssueEvidence{} = edge, viewer) do
    tier = WorkDisclosure.effective_tier(edge, viewer)

    source =
      edge
      |> Map.from_struct()
      |> Map.merge(%{commit: edge.commit_sha, recorded_at: edge.inserted_at})

    case WorkDisclosure.project(:evidence, source, tier) do
      nil -> []
      projected -> [projected]
    end
  end
end
