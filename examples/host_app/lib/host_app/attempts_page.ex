defmodule HostApp.AttemptsPage do
  @moduledoc """
  An issue page's attempts, projected per reader the way the host's page
  does: the viewer is computed once per request with `viewer/2`; then per
  record, never batched, `effective_tier/2` on the assignment (with its
  `:artifact_link` preloaded, `nil`, or not loaded), `project(:attempt, ...)`
  of `Map.from_struct(assignment)` plus `:requester_kind`, and with the same
  tier `project(:work_job, ...)` of `Map.from_struct(job)` plus `:budget`.

  `issues` is a list of `%{id, attempts: [%Assignment{work_job: job | nil}]}`;
  a page lists every attempt of up to 25 issues. An attempt whose tier is
  `dark` (a revoked link) leaves the page rather than appearing as an empty
  shell.
  """
  alias OpenAgents.Forge.Assignment
  alias OpenAgents.Transparency.WorkDisclosure
  alias OpenAgents.Work.Job

  @issues_per_page 25

  @spec issues_per_page() :: pos_integer()
  def issues_per_page, do: @issues_per_page

  @spec render(term(), term(), [map()]) :: map()
  def render(repository, user, issues) do
    viewer = WorkDisclosure.viewer(repository, user)
    {page, rest} = Enum.split(issues, @issues_per_page)

    %{
      viewer: viewer,
      issues:
        Enum.map(page, fn issue ->
          %{id: issue.id, attempts: Enum.flat_map(issue.attempts, &row(&1, viewer))}
        end),
      more_issues: length(rest)
    }
  end

  @doc "One attempt and its work job at this viewer's tier; `[]` when the attempt is dark."
  @spec row(Assignment.t(), map()) :: [map()]
  def row(%Assignment{} = assignment, viewer) do
    tier = WorkDisclosure.effective_tier(assignment, viewer)

    source =
      assignment
      |> Map.from_struct()
      |> Map.put(:requester_kind, Assignment.requester_kind(assignment))

    case WorkDisclosure.project(:attempt, source, tier) do
      nil -> []
      attempt -> [%{tier: tier, attempt: attempt, work_job: work_job(assignment.work_job, tier)}]
    end
  end

  defp work_job(%Job{} = job, tier) do
    source = job |> Map.from_struct() |> Map.put(:budget, Job.budget_bounds(job))
    WorkDisclosure.project(:work_job, source, tier)
  end

  defp work_job(_not_a_job, _tier), do: nil
end
