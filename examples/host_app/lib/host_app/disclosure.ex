defmodule HostApp.Disclosure do
  @moduledoc """
  What a reader may see of an attempt, its work job, evidence and traces,
  asked of the library per record, never batched, as the host's pages do
  (shared/upstream.md, "How the two modules are called"): `viewer/2` once per
  request; per attempt `effective_tier/2` on the struct (link preloaded), then
  `project(:attempt, ...)` of `Map.from_struct/1` plus `:requester_kind`, and
  with the same tier `project(:work_job, ...)` plus `:budget`; per evidence
  edge its own tier and `project(:evidence, ...)`; per trace the attempt's
  tier, nothing when it is `private` (its document never loaded). A `dark`
  record is left out (`nil` or `[]`). Nothing here knows a field, a tier or a
  rule: the library answers.

  A listing's query reads only the attempts the reader does not read at
  `dark` (`WorkDisclosure.where_visible/2`); each row it reads is still
  projected on its own by `item/2`.
  """
  alias OpenAgents.Forge.{Assignment, IssueEvidence}
  alias OpenAgents.Transparency.WorkDisclosure
  alias OpenAgents.Work.Job

  @typedoc "An attempt as a reader sees it: its tier, the attempt, its work job (or `nil`)."
  @type item :: %{tier: atom(), attempt: map(), work_job: map() | nil}

  @doc "The viewer descriptor for this repository and user (`nil` for anonymous)."
  @spec viewer(struct(), struct() | nil) :: map()
  def viewer(repository, user), do: WorkDisclosure.viewer(repository, user)

  @doc "One attempt and its work job at the viewer's tier; `nil` when the attempt is dark."
  @spec item(Assignment.t(), map()) :: item() | nil
  def item(%Assignment{} = assignment, viewer) do
    tier = WorkDisclosure.effective_tier(assignment, viewer)

    source =
      assignment
      |> Map.from_struct()
      |> Map.put(:requester_kind, Assignment.requester_kind(assignment))

    case WorkDisclosure.project(:attempt, source, tier) do
      nil -> nil
      attempt -> %{tier: tier, attempt: attempt, work_job: work_job(assignment.work_job, tier)}
    end
  end

  defp work_job(%Job{} = job, tier) do
    source = job |> Map.from_struct() |> Map.put(:budget, Job.budget_bounds(job))
    WorkDisclosure.project(:work_job, source, tier)
  end

  defp work_job(_not_loaded_or_nil, _tier), do: nil

  @doc "The evidence edges the viewer may see, each at its own tier."
  @spec evidence([IssueEvidence.t()], map()) :: [map()]
  def evidence(edges, viewer) do
    for edge <- edges,
        tier = WorkDisclosure.effective_tier(edge, viewer),
        source =
          edge
          |> Map.from_struct()
          |> Map.merge(%{commit: edge.commit_sha, recorded_at: edge.inserted_at}),
        projected = WorkDisclosure.project(:evidence, source, tier),
        projected != nil,
        do: projected
  end

  @doc """
  The traces of an attempt seen at `tier` (its attempt's): each source as
  `HostApp.Attempts.trace_sources/1` reads it (private ones already left
  out, `schema_version` and `step_count` already read from the document).
  """
  @spec traces([map()], atom()) :: [map()]
  def traces(sources, tier) do
    for source <- sources,
        projected = WorkDisclosure.project(:trace, source, tier),
        projected != nil,
        do: projected
  end
end
