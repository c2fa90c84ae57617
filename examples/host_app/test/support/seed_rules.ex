defmodule HostApp.SeedRules do
  @moduledoc """
  The expectations the tests hold the library to, written out from the seeds
  (`Delegations.Target` and `Transparency.WorkDisclosure`) and the upstream
  facts, independently of the library: nothing here calls it.
  """

  # ── Target ────────────────────────────────────────────────────────────────

  @box_lifecycle %{
    "queued" => "queued",
    "init" => "starting",
    "provisioning" => "starting",
    "cloning" => "starting",
    "provisioned" => "starting",
    "ready" => "active",
    "idle" => "active",
    "running" => "active",
    "archiving" => "stopping",
    "archived" => "destroyed",
    "error" => "failed"
  }

  @job_lifecycle %{
    "queued" => "queued",
    "running" => "active",
    "completed" => "succeeded",
    "cancelled" => "cancelled",
    "failed" => "failed",
    "interrupted" => "failed",
    "budget_exhausted" => "failed"
  }

  def box_states,
    do: ~w(init provisioning provisioned cloning ready idle running archiving archived error)

  def job_statuses, do: ~w(queued running completed failed interrupted budget_exhausted cancelled)

  @doc "A Box state's unified lifecycle; any word the table lacks reads failed."
  def box_lifecycle(state), do: Map.get(@box_lifecycle, state, "failed")

  @doc "A work job status's delegation lifecycle; any word the table lacks (\"stopping\") reads failed."
  def job_lifecycle(status), do: Map.get(@job_lifecycle, status, "failed")

  def computer_lifecycle(%{status: status, revoked_at: revoked_at}, online?) do
    cond do
      status == "revoked" or not is_nil(revoked_at) -> "destroyed"
      status == "active" and online? -> "active"
      true -> "cold"
    end
  end

  def custody("box"), do: "openagents_managed"
  def custody("computer"), do: "customer_premises"

  def runtime_class("box"), do: nil
  def runtime_class("computer"), do: "connected"

  def capabilities(lifecycle, authorized?),
    do: if(lifecycle == "active" and authorized?, do: ["start"], else: [])

  def unavailable_reason("active", true), do: nil
  def unavailable_reason("active", false), do: "not_authorized"
  def unavailable_reason(lifecycle, _authorized?), do: lifecycle

  def cancellable?(lifecycle), do: lifecycle in ~w(queued starting active)

  def seam_keys, do: ~w(capabilities custody lifecycle runtime_class unavailable_reason)

  # ── WorkDisclosure ──────────────────────────────────────────────────────

  @schedule %{
    attempt: %{
      pulse: ~w(id target_kind state requester_kind admitted_at started_at finished_at)a,
      ledger: ~w(branch terminal_branch terminal_commit failure_reason)a,
      glass: []
    },
    work_job: %{
      pulse: ~w(id kind status started_at completed_at)a,
      ledger: ~w(tool_call_count continuation_count error_code budget)a,
      glass: ~w(report usage model_id)a
    },
    evidence: %{
      pulse: ~w(id family result plane source recorded_at)a,
      ledger: ~w(commit receipt_id environment)a,
      glass: []
    },
    trace: %{
      pulse: ~w(id schema_version step_count recorded_at)a,
      ledger: ~w(digest byte_size)a,
      glass: []
    }
  }

  @never %{
    attempt: ~w(conversation_id conversation_box_id machine_id run_id work_job_id deadline_at
         credential_delivery_status credential_delivery_reason repository_id issue_id
         transparency_tier artifact_link_id inserted_at updated_at)a,
    work_job: ~w(goal context_hint delegation authority_snapshot machine_id conversation_id
         owner_visitor_id requesting_tool_step_ref instruction_digest tool_catalog_digest
         memory_snapshot_ref report_message_id owner_node generation surface inserted_at
         updated_at)a,
    evidence: ~w(actor assignment_id repository_id issue_id transparency_tier artifact_link_id)a,
    trace: ~w(user_id visibility assignment_id)a
  }

  @doc "The fields of `family` a reader at `tier` sees, as a sorted list; `[]` at dark."
  def fields(family, tier) do
    rungs =
      case tier do
        :dark -> []
        :pulse -> [:pulse]
        :ledger -> [:pulse, :ledger]
        :glass -> [:pulse, :ledger, :glass]
      end

    rungs |> Enum.flat_map(&Map.fetch!(@schedule[family], &1)) |> Enum.sort()
  end

  def never(family), do: Map.fetch!(@never, family)

  # ── The ladder (upstream.md, OpenAgents.Transparency; seed 002) ──────────

  @rank %{dark: 0, pulse: 1, ledger: 2, glass: 3}

  @doc """
  A reader's own tier by its relationship to the repository, as `viewer/2`
  gives it: an operator glass, a member ledger, any other user or nobody pulse.
  """
  def viewer_tier(:operator), do: :glass
  def viewer_tier(:member), do: :ledger
  def viewer_tier(_user_or_anonymous), do: :pulse

  @doc """
  The tier `reader` (`:anonymous`, `:stranger`, `:member`, `:owner`,
  `:operator`, with `reader_id` its account id) reads a record at, given its
  link as loaded (`%{account_id, tier, revoked_at}`, or `:none` / `:not_loaded`)
  and its tier column: a revoked link is dark for everyone; a live one is
  glass for its account and for an operator, else its tier clamped by the
  reader's; with no loaded link an operator is glass and everyone else reads
  the tier column clamped.
  """
  def effective_tier(reader, reader_id, link, tier_column) do
    own = viewer_tier(reader)

    case link do
      %{revoked_at: revoked_at} when revoked_at != nil -> :dark
      %{account_id: ^reader_id} when reader_id != nil -> :glass
      %{} when reader == :operator -> :glass
      %{tier: tier} -> clamp(String.to_existing_atom(tier), own)
      _none_or_not_loaded when reader == :operator -> :glass
      _none_or_not_loaded -> clamp(String.to_existing_atom(tier_column), own)
    end
  end

  defp clamp(tier, own), do: Enum.min_by([tier, own], &Map.fetch!(@rank, &1))
end
