# Inputs shaped like the host app's (see ../shared/upstream.md): schema
# columns, an attempt record with its associations, a work job, viewers.
# Needs the reference stand-ins loaded first (ArtifactLink, Machine, User).
Code.require_file("../../test/support/upstream.ex", __DIR__)

defmodule Bench.Meta do
  @moduledoc false
  # Stand-in for Ecto.Schema.Metadata: every Ecto struct carries one.
  defstruct state: :loaded, source: nil, prefix: nil, context: nil, schema: nil
end

defmodule Bench.NotLoaded do
  @moduledoc false
  # Stand-in for Ecto.Association.NotLoaded.
  defstruct [:__field__, :__owner__, :__cardinality__]
end

defmodule Bench.Fixtures do
  @moduledoc false
  alias OpenAgents.Transparency.ArtifactLink

  # The host's tables and associations (test/support/upstream.ex).
  @upstream OpenAgentsPolicy.Test.Upstream
  @attempt_assocs @upstream.attempt_associations()
  @evidence_columns @upstream.columns(:evidence)
  @trace_columns @upstream.columns(:trace)

  @owner "acct-1"

  # ── viewers ────────────────────────────────────────────────────────────

  def member_viewer, do: %{account_id: "acct-2", tier: :ledger}
  def owner_viewer, do: %{account_id: @owner, tier: :ledger}
  def anonymous_viewer, do: %{account_id: nil, tier: :pulse}
  def operator_viewer, do: %{account_id: "acct-9", tier: :glass, admin: true}

  def repository, do: %{id: "repo-1", name: "openagents"}

  def users do
    [
      %OpenAgents.Accounts.User{id: "acct-9", admin: true},
      %OpenAgents.Accounts.User{id: "acct-2", member_of: ["repo-0", "repo-1"]},
      %OpenAgents.Accounts.User{id: "acct-3", member_of: ["repo-7"]},
      nil
    ]
  end

  # ── records ────────────────────────────────────────────────────────────

  def uuid(i), do: "00000000-0000-4000-8000-" <> String.pad_leading(Integer.to_string(i), 12, "0")

  def ts(i), do: DateTime.add(~U[2026-08-25 10:00:00.000000Z], i, :second)

  def link(i, opts \\ []) do
    %ArtifactLink{
      id: uuid(900_000 + i),
      account_id: Keyword.get(opts, :owner, @owner),
      repository_id: "repo-1",
      artifact_type: "attempt",
      artifact_ref: uuid(i),
      tier: "ledger",
      consent: %{"granted_by" => "requesting_principal"},
      authority_snapshot: %{"roots" => ["/home/dev/src"], "cwd" => "/home/dev/src/openagents"},
      revoked_at: Keyword.get(opts, :revoked_at),
      revocation_tombstone: nil
    }
  end

  @doc "The attempt record as a map with the Assignment struct's keys (25 columns, __meta__, 8 associations)."
  def attempt_record(i, link) do
    columns = %{
      id: uuid(i),
      conversation_id: uuid(100_000 + i),
      conversation_box_id: uuid(200_000 + i),
      machine_id: nil,
      repository_id: "repo-1",
      issue_id: uuid(300_000 + div(i, 8)),
      run_id: uuid(400_000 + i),
      work_job_id: uuid(500_000 + i),
      target_kind: Enum.at(["box", "computer"], rem(i, 2)),
      credential_delivery_status: "delivered",
      credential_delivery_reason: nil,
      requesting_principal: %{"type" => "user", "id" => @owner},
      branch: "openagents/issue-#{i}",
      state: Enum.at(~w(admitted running completed failed cancelled), rem(i, 5)),
      terminal_branch: "openagents/issue-#{i}",
      terminal_commit: String.duplicate("ab12", 10),
      failure_reason: nil,
      deadline_at: ts(i + 3600),
      admitted_at: ts(i),
      started_at: ts(i + 5),
      finished_at: ts(i + 600),
      transparency_tier: "ledger",
      artifact_link_id: link && link.id,
      inserted_at: ts(i),
      updated_at: ts(i + 600)
    }

    assocs =
      Map.new(@attempt_assocs, fn
        :artifact_link ->
          {:artifact_link, link}

        assoc ->
          {assoc,
           %Bench.NotLoaded{__field__: assoc, __owner__: Bench.Assignment, __cardinality__: :one}}
      end)

    columns
    |> Map.merge(assocs)
    |> Map.put(:__meta__, %Bench.Meta{source: "forge_assignments", schema: Bench.Assignment})
  end

  @doc "What the host projects: Map.from_struct(assignment) plus :requester_kind (35 keys)."
  def attempt_source(record), do: Map.put(record, :requester_kind, "user")

  @doc "Map.from_struct(job) |> Map.put(:budget, bounds): the 29 columns plus :budget."
  def work_job_source(i) do
    %{
      id: uuid(500_000 + i),
      conversation_id: uuid(100_000 + i),
      owner_visitor_id: nil,
      machine_id: uuid(600_000 + i),
      surface: "text",
      goal: "Fix the flaky test in issue #{i}",
      context_hint: "see the CI log",
      requesting_tool_step_ref: "step-#{i}",
      kind: "forge_attempt",
      delegation: %{"kind" => "forge_attempt"},
      authority_snapshot: %{"roots" => ["/home/dev/src"], "machine_name" => "devbox"},
      budget_snapshot: %{
        "wall_clock_ms" => 3_600_000,
        "report_bytes" => 8192,
        "prompt_bytes" => 65_536
      },
      status: Enum.at(~w(queued running completed failed interrupted), rem(i, 5)),
      report: String.duplicate("The change fixes the race. ", 80),
      error_code: nil,
      model_id: "model-x",
      instruction_digest: String.duplicate("c0ffee", 10),
      tool_catalog_digest: String.duplicate("beef", 16),
      memory_snapshot_ref: "mem-#{i}",
      tool_call_count: 40 + rem(i, 17),
      continuation_count: rem(i, 3),
      usage: %{"input_tokens" => 12_000, "output_tokens" => 3_000, "cost_usd" => 0.42},
      owner_node: "node-a@host",
      generation: 1,
      report_message_id: uuid(700_000 + i),
      started_at: ts(i + 5),
      completed_at: ts(i + 600),
      inserted_at: ts(i),
      updated_at: ts(i + 600),
      budget: %{wall_clock_ms: 3_600_000, report_bytes: 8192, prompt_bytes: 65_536}
    }
  end

  def evidence_source(i) do
    Map.new(@evidence_columns, &{&1, "#{&1}-#{i}"})
    |> Map.put(:commit, "abc")
    |> Map.put(:recorded_at, ts(i))
  end

  def trace_source(i) do
    Map.new(@trace_columns, &{&1, "#{&1}-#{i}"})
    |> Map.merge(%{schema_version: "ATIF-v1.7", step_count: 42, recorded_at: ts(i)})
  end

  @doc "A page: `count` attempts, each `{record, attempt_source, work_job_source}`, every record with a live link."
  def page(count \\ 200) do
    for i <- 1..count do
      record = attempt_record(i, link(i))
      {record, attempt_source(record), work_job_source(i)}
    end
  end

  # ── machines ───────────────────────────────────────────────────────────

  def machines do
    alias OpenAgents.Machines.Machine

    [
      %Machine{id: "m1", name: "laptop", status: "active", tier: "ledger", revoked_at: nil},
      %Machine{id: "m2", name: "desktop", status: "revoked", tier: "ledger", revoked_at: ts(1)},
      %Machine{id: "m3", name: "old", status: "active", tier: "ledger", revoked_at: ts(2)},
      %Machine{id: "m4", name: "weird", status: "pending", tier: "ledger", revoked_at: nil}
    ]
  end
end
