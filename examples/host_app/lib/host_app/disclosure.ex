defmodule HostApp.Disclosure do
  @moduledoc """
  What a reader may see of an attempt, its work job, its evidence and its
  traces, asked of the library per record and never batched, the way the
  host's pages do (shared/upstream.md, "How the two modules are called"):

  - the viewer is described once per request with `viewer/2`;
  - per attempt, `effective_tier/2` on the `%Assignment{}` itself (its
    `:artifact_link` preloaded: every read of `HostApp.Attempts` that feeds a
    reader preloads it), then
    `project(:attempt, ...)` of `Map.from_struct/1` plus `:requester_kind`,
    then with the same tier `project(:work_job, ...)` of the job plus
    `:budget` (the bounds of its budget snapshot);
  - per evidence edge, its own `effective_tier/2` and `project(:evidence, ...)`,
    with `commit` read from `commit_sha` and `recorded_at` from `inserted_at`;
  - per trace, the tier of the attempt it belongs to (a trace has no tier
    column nor link of its own), and nothing when the uploader kept it
    `private`; `schema_version` and `step_count` are read from the document
    by the database, and the document is neither loaded nor published.

  A record whose tier is `dark` (a revoked link) is left out rather than
  shown as an empty shell: every function here returns `nil` or `[]` for it.
  Nothing here knows a field, a tier or a rule: the library answers.
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
