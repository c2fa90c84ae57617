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

  A listing asks first, once per request, which shapes of attempt the
  reader may see (`visible/1`), so that its query reads no row the library
  has already called dark for that reader; each row it reads is still
  decided on its own by `item/2`.
  """
  alias OpenAgents.Forge.{Assignment, IssueEvidence}
  alias OpenAgents.Transparency.{ArtifactLink, Ladder, WorkDisclosure}
  alias OpenAgents.Work.Job

  @typedoc "An attempt as a reader sees it: its tier, the attempt, its work job (or `nil`)."
  @type item :: %{tier: atom(), attempt: map(), work_job: map() | nil}

  @doc "The viewer descriptor for this repository and user (`nil` for anonymous)."
  @spec viewer(struct(), struct() | nil) :: map()
  def viewer(repository, user), do: WorkDisclosure.viewer(repository, user)

  @typedoc """
  The tier words under which the viewer may see an attempt, per shape of
  its link: none (`:column`, the attempt's tier column), or a live or
  revoked link (`{:live | :revoked, :own | :other}`, the link's tier),
  of the viewer's account (`:account`, `nil` for none) or another's.
  `:words` are the tier words: a value outside them is no shape asked here.
  """
  @type visible :: %{
          words: [String.t()],
          account: term(),
          column: [String.t()],
          links: %{{:live | :revoked, :own | :other} => [String.t()]}
        }

  # A link's account that is no reader's (every reader's is a UUID).
  @other_account "not-the-reader"
  @revoked_at ~U[2000-01-01 00:00:00Z]

  @doc """
  Asks the library, before any row is read, under which tier words each
  shape of attempt is not dark to `viewer`: `effective_tier/2` of an
  attempt of each shape, for each tier word. A query may leave out the rows
  of a shape and word missing here (the library called them dark); a row
  whose tier is not a tier word is still to be read and decided by
  `item/2`, as every row read is.
  """
  @spec visible(map()) :: visible()
  def visible(viewer) do
    words = Enum.map(Ladder.tiers(), &Atom.to_string/1)
    account = Map.get(viewer, :account_id)

    seen = fn record ->
      Enum.filter(words, &(WorkDisclosure.effective_tier(record.(&1), viewer) != :dark))
    end

    links =
      for state <- [:live, :revoked],
          owner <- if(account, do: [:own, :other], else: [:other]),
          into: %{} do
        link = fn word ->
          %ArtifactLink{
            account_id: if(owner == :own, do: account, else: @other_account),
            tier: word,
            revoked_at: if(state == :revoked, do: @revoked_at)
          }
        end

        {{state, owner}, seen.(&%Assignment{artifact_link_id: "shape", artifact_link: link.(&1)})}
      end

    %{
      words: words,
      account: account,
      column: seen.(&%Assignment{artifact_link: nil, transparency_tier: &1}),
      links: links
    }
  end

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
