defmodule OpenAgentsPolicy.Test.Upstream do
  @moduledoc false
  # The host application's facts (upstream.md: "The host app: facts the
  # library must fit"): its substrate vocabularies and the shapes of its
  # schemas, each once, in the host's declaration order. These are inputs,
  # not answers: the app's own TargetTest and WorkDisclosureTest derive their
  # inputs from the same lists in the app's modules, so a word or a column the
  # host adds fails those shapes here the day it lands. No rule of the library
  # is written here; what each input reads is the core's to say, held to the
  # seeds by `make parity`.

  @doc "`Box.ConversationBox.states/0`."
  def box_states,
    do: ~w(init provisioning provisioned cloning ready idle running archiving archived error)

  @doc "The synthetic state of a fan-out item that admission has not let through."
  def fanout_queued, do: "queued"

  @doc "`Box.Run.states/0`."
  def run_states, do: ~w(admitted dispatched running completed failed cancelled timed_out lost)

  @doc "`Box.Run.terminal_states/0`."
  def run_terminal_states, do: ~w(completed failed cancelled timed_out lost)

  @doc "`Work.Job.statuses/0`."
  def job_statuses,
    do: ~w(queued running completed failed interrupted budget_exhausted cancelled)

  @doc "`Work.Job.terminal_statuses/0`."
  def job_terminal_statuses, do: ~w(completed failed interrupted budget_exhausted cancelled)

  @doc "The status a job carries while its cancel is in flight: not in `statuses/0`."
  def job_cancelling_status, do: "stopping"

  @doc "`Machines.Machine` status (database check)."
  def machine_statuses, do: ~w(active revoked)

  @doc "`Machines.Machine` fields."
  def machine_fields,
    do:
      ~w(id user_id name tier platform agent_version roots token_digest token_expires_at status
         revoked_at last_seen_at last_probe inserted_at updated_at scoped_forge_credentials_enabled)a

  @doc "`Capacity.Catalog`: class => {isolation, egress, data location}."
  def capacity_catalog do
    %{
      "standard" => {"managed_standard", "policy_broker", "openagents_managed"},
      "strong" => {"managed_strong", "policy_broker", "openagents_managed"},
      "batch" => {"managed_standard", "policy_broker", "openagents_managed"},
      "connected" => {"customer_controlled", "customer_network", "customer_premises"}
    }
  end

  @doc "The table behind each disclosure family."
  def tables,
    do: %{
      attempt: "forge_assignments",
      work_job: "work_jobs",
      evidence: "issue_evidence",
      trace: "traces"
    }

  @doc "The columns of the table behind `family`, in `__schema__(:fields)` order."
  def columns(:attempt),
    do: ~w(id conversation_id conversation_box_id machine_id repository_id issue_id run_id
         work_job_id target_kind credential_delivery_status credential_delivery_reason
         requesting_principal branch state terminal_branch terminal_commit failure_reason
         deadline_at admitted_at started_at finished_at transparency_tier artifact_link_id
         inserted_at updated_at)a

  def columns(:work_job),
    do: ~w(id conversation_id owner_visitor_id machine_id surface goal context_hint
         requesting_tool_step_ref kind delegation authority_snapshot budget_snapshot status
         report error_code model_id instruction_digest tool_catalog_digest memory_snapshot_ref
         tool_call_count continuation_count usage owner_node generation report_message_id
         started_at completed_at inserted_at updated_at)a

  def columns(:evidence),
    do: ~w(id commit_sha family receipt_id plane environment result actor source repository_id
         issue_id assignment_id transparency_tier artifact_link_id inserted_at)a

  def columns(:trace),
    do: ~w(id user_id digest visibility document byte_size assignment_id inserted_at)a

  @doc """
  The association keys of the attempt's Ecto schema: `Map.from_struct/1` of
  an `%Assignment{}` carries eight of them beside its 25 columns.
  """
  def attempt_associations,
    do: ~w(conversation conversation_box machine repository issue run work_job artifact_link)a

  @doc "`ArtifactLink` (`artifact_links`) fields."
  def artifact_link_fields,
    do: ~w(id account_id repository_id artifact_type artifact_ref tier consent authority_snapshot
         revoked_at revocation_tombstone inserted_at)a
end
