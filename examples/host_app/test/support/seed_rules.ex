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
end
