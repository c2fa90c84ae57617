defmodule HostApp.Fixtures do
  @moduledoc "Readers, a repository, and fully-populated records whose secrets are easy to look for."
  alias OpenAgents.Accounts.User
  alias OpenAgents.Forge.{Assignment, IssueEvidence}
  alias OpenAgents.Machines.Machine
  alias OpenAgents.Repositories.Repository
  alias OpenAgents.Traces.Trace
  alias OpenAgents.Transparency.ArtifactLink
  alias OpenAgents.Work.Job

  @at ~U[2026-08-25 10:00:00Z]

  def id, do: HostApp.Id.uuid()

  @doc """
  The five kinds of reader, and the repository they read. The owner requested
  the linked attempts and is not a member: whatever they see past `pulse`,
  the link gave them.
  """
  def world do
    maintainer = %User{id: id(), handle: "maintainer"}
    member = %User{id: id(), handle: "member"}
    owner = %User{id: id(), handle: "owner"}
    stranger = %User{id: id(), handle: "stranger"}
    operator = %User{id: id(), handle: "operator", role: "operator"}

    repository = %Repository{
      id: id(),
      name: "acme/widgets",
      owner_id: maintainer.id,
      member_ids: [member.id]
    }

    %{
      repository: repository,
      readers: %{
        anonymous: nil,
        stranger: stranger,
        member: member,
        owner: owner,
        operator: operator
      }
    }
  end

  def link(owner_id, repository_id, overrides \\ %{}) do
    struct(
      ArtifactLink,
      Map.merge(
        %{
          id: id(),
          account_id: owner_id,
          repository_id: repository_id,
          artifact_type: "attempt",
          artifact_ref: "id",
          tier: "ledger",
          consent: %{"granted_by" => "requesting_principal"},
          authority_snapshot: %{"roots" => ["/home/owner/SECRET-ROOT"]},
          revoked_at: nil,
          inserted_at: @at
        },
        overrides
      )
    )
  end

  @doc "A work job with every column set; never-listed columns carry `SECRET-` markers."
  def job(overrides \\ %{}) do
    struct(
      Job,
      Map.merge(
        %{
          id: id(),
          conversation_id: "SECRET-conversation",
          owner_visitor_id: "SECRET-visitor",
          machine_id: "SECRET-machine",
          surface: "SECRET-surface-voice",
          goal: "SECRET-GOAL: fix the private billing module",
          context_hint: "SECRET-context",
          requesting_tool_step_ref: "SECRET-step-ref",
          kind: "forge_attempt",
          delegation: %{"prompt" => "SECRET-delegation-prompt"},
          authority_snapshot: %{"roots" => ["/SECRET-root"], "machine_name" => "SECRET-host"},
          budget_snapshot: %{
            "wall_clock_seconds" => 1800,
            "max_report_bytes" => 8192,
            "max_prompt_bytes" => 65_536,
            "prompt" => "SECRET-budgeted-prompt"
          },
          status: "completed",
          report: "Fixed the off-by-one in lib/billing.ex",
          error_code: nil,
          model_id: "model-x",
          instruction_digest: "SECRET-instruction-digest",
          tool_catalog_digest: "SECRET-catalog-digest",
          memory_snapshot_ref: "SECRET-memory",
          tool_call_count: 14,
          continuation_count: 2,
          usage: %{"input_tokens" => 1000, "output_tokens" => 200},
          owner_node: "SECRET-node@internal",
          generation: 3,
          report_message_id: "SECRET-report-message",
          started_at: @at,
          completed_at: DateTime.add(@at, 600),
          inserted_at: @at,
          updated_at: @at
        },
        overrides
      )
    )
  end

  @doc "An attempt with every column set and its job preloaded; `artifact_link` as given."
  def attempt(repository_id, principal, link, overrides \\ %{}) do
    job = Map.get(overrides, :work_job, job())

    struct(
      Assignment,
      Map.merge(
        %{
          id: id(),
          conversation_id: "SECRET-conversation",
          conversation_box_id: "SECRET-box",
          machine_id: "SECRET-machine",
          repository_id: repository_id,
          issue_id: "SECRET-issue",
          run_id: "SECRET-run",
          work_job_id: job && job.id,
          target_kind: "computer",
          credential_delivery_status: "SECRET-delivered",
          credential_delivery_reason: "SECRET-credential-reason",
          requesting_principal: principal,
          branch: "fix/billing-off-by-one",
          state: "completed",
          terminal_branch: "fix/billing-off-by-one",
          terminal_commit: "0123456789abcdef0123456789abcdef01234567",
          failure_reason: nil,
          deadline_at: DateTime.add(@at, 3600),
          admitted_at: @at,
          started_at: DateTime.add(@at, 5),
          finished_at: DateTime.add(@at, 610),
          transparency_tier: "ledger",
          artifact_link_id: link && Map.get(link, :id),
          artifact_link: link,
          inserted_at: @at,
          updated_at: @at,
          work_job: job
        },
        overrides
      )
    )
  end

  def evidence(repository_id, link, overrides \\ %{}) do
    struct(
      IssueEvidence,
      Map.merge(
        %{
          id: id(),
          commit_sha: "fedcba9876543210fedcba9876543210fedcba98",
          family: "deployment",
          receipt_id: "rcpt_123",
          plane: "tenant",
          environment: "acme-production-eu",
          result: "passed",
          actor: %{"type" => "user", "id" => "SECRET-actor-id"},
          source: "closing_reference",
          repository_id: repository_id,
          issue_id: "SECRET-issue",
          assignment_id: "SECRET-assignment",
          transparency_tier: "ledger",
          artifact_link_id: link && Map.get(link, :id),
          artifact_link: link,
          inserted_at: @at
        },
        overrides
      )
    )
  end

  def trace(assignment, overrides \\ %{}) do
    struct(
      Trace,
      Map.merge(
        %{
          id: id(),
          user_id: "SECRET-uploader",
          digest: "sha256:" <> String.duplicate("ab", 32),
          visibility: "public",
          document: %{
            "schema_version" => "ATIF-v1.7",
            "steps" => [
              %{"role" => "user", "content" => "SECRET-PROMPT: the private billing code"},
              %{"role" => "assistant", "content" => "SECRET-ANSWER"},
              %{"tool" => "read_file", "arguments" => %{"path" => "SECRET-PATH/billing.ex"}}
            ]
          },
          byte_size: 4096,
          assignment_id: assignment.id,
          inserted_at: @at
        },
        overrides
      )
    )
  end

  def machine(overrides \\ %{}) do
    struct(
      Machine,
      Map.merge(
        %{
          id: id(),
          user_id: id(),
          name: "laptop",
          tier: "personal",
          platform: "linux",
          agent_version: "1.2.3",
          roots: ["/home/owner"],
          token_digest: "digest",
          status: "active",
          revoked_at: nil,
          inserted_at: @at,
          updated_at: @at
        },
        overrides
      )
    )
  end
end
