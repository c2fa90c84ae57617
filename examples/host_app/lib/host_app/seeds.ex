defmodule HostApp.Seeds do
  @moduledoc """
  The seeded world (`priv/repo/seeds.exs`, `HostApp.Release.seed/0`):
  repository `acme-widgets` with issue 1; users `operator` (admin), `member`
  (a member), `owner`, `stranger`; four attempts on issue 1: the owner's with
  a live link (tier ledger, column pulse), the owner's with a revoked link
  (column ledger), an agent's at ledger and one at pulse (no link); each with
  a work job, one evidence row and one trace; for `owner`, an idle Box and an
  active Computer, not online. The owner's links are minted by the library
  (`link_for_attempt/3`). Every never-listed free-text column holds
  `SECRET`. `run/0` does nothing when `acme-widgets` already exists.
  """
  alias OpenAgents.Accounts.User
  alias OpenAgents.Box.{ConversationBox, Run}
  alias OpenAgents.Chat.Conversation
  alias OpenAgents.Forge.{Assignment, Issue, IssueEvidence}
  alias OpenAgents.Machines.Machine
  alias OpenAgents.Repo
  alias OpenAgents.Repositories.{Membership, Repository}
  alias OpenAgents.Traces.Trace
  alias OpenAgents.Transparency.{ArtifactLink, WorkDisclosure}
  alias OpenAgents.Work.Job

  @slug "acme-widgets"
  @at ~U[2026-08-25 10:00:00Z]

  @doc "The seeded repository's slug."
  @spec slug() :: String.t()
  def slug, do: @slug

  @doc "Seeds the world unless it is there; returns what it made (or `:already_seeded`)."
  @spec run() :: map() | :already_seeded
  def run do
    if Repo.get_by(Repository, slug: @slug) do
      :already_seeded
    else
      {:ok, world} = Repo.transaction(&seed/0)
      world
    end
  end

  defp seed do
    repository = Repo.insert!(%Repository{slug: @slug, name: "Acme Widgets"})

    [operator, member, owner, stranger] =
      for {handle, admin} <- [
            {"operator", true},
            {"member", false},
            {"owner", false},
            {"stranger", false}
          ],
          do: Repo.insert!(%User{handle: handle, operator: admin})

    Repo.insert!(%Membership{repository_id: repository.id, user_id: member.id})

    issue =
      Repo.insert!(%Issue{repository_id: repository.id, number: 1, title: "Billing rounds down"})

    conversation = Repo.insert!(%Conversation{user_id: owner.id, title: "SECRET-conversation"})

    box =
      Repo.insert!(%ConversationBox{
        user_id: owner.id,
        conversation_id: conversation.id,
        state: "idle",
        workspace_path: "/srv/boxes/SECRET-workspace"
      })

    machine =
      Repo.insert!(%Machine{
        user_id: owner.id,
        name: "SECRET-owner-laptop",
        tier: "personal",
        platform: "linux",
        agent_version: "1.2.3",
        roots: ["/home/owner/SECRET-root"],
        token_digest: "SECRET-token-digest",
        token_expires_at: DateTime.add(@at, 30 * 86_400),
        status: "active",
        last_probe: %{"note" => "SECRET-probe"}
      })

    run =
      Repo.insert!(%Run{
        conversation_box_id: box.id,
        state: "completed",
        command: "SECRET-command"
      })

    user = %{"type" => "user", "id" => owner.id}
    agent = %{"type" => "agent", "id" => "agent-SECRET-7"}

    ctx = %{
      repository: repository,
      issue: issue,
      conversation: conversation,
      box: box,
      machine: machine,
      run: run,
      owner: owner
    }

    attempts = [
      attempt(ctx, 1, user, "pulse", %{target_kind: "computer", state: "completed"}),
      attempt(ctx, 2, user, "ledger", %{
        target_kind: "box",
        state: "failed",
        failure_reason: "tests failed"
      }),
      attempt(ctx, 3, agent, "ledger", %{target_kind: "computer", state: "completed"}),
      attempt(ctx, 4, agent, "pulse", %{target_kind: "box", state: "running"})
    ]

    [_, revoked | _] = attempts

    revoked.artifact_link
    |> ArtifactLink.revoke_changeset(%{"reason" => "SECRET-requester withdrew consent"})
    |> Repo.update!()

    %{
      repository: repository,
      users: %{operator: operator, member: member, owner: owner, stranger: stranger},
      issue: issue,
      box: box,
      machine: machine,
      attempts: Enum.map(attempts, & &1.id)
    }
  end

  defp attempt(ctx, n, principal, tier, attrs) do
    at = DateTime.add(@at, n * 3600)

    link =
      case WorkDisclosure.link_for_attempt(ctx.repository, principal, %{
             "roots" => ["/home/owner/SECRET-root"]
           }) do
        {:ok, link} -> link
        :none -> nil
      end

    job = Repo.insert!(job(ctx, n, at))
    box? = attrs.target_kind == "box"

    assignment =
      Repo.insert!(
        struct(
          Assignment,
          Map.merge(
            %{
              conversation_id: ctx.conversation.id,
              conversation_box_id: if(box?, do: ctx.box.id),
              machine_id: if(box?, do: nil, else: ctx.machine.id),
              repository_id: ctx.repository.id,
              issue_id: ctx.issue.id,
              run_id: if(box?, do: ctx.run.id),
              work_job_id: job.id,
              credential_delivery_status: "SECRET-delivered",
              credential_delivery_reason: "SECRET-credential-reason",
              requesting_principal: principal,
              branch: "fix/billing-#{n}",
              terminal_branch: "fix/billing-#{n}",
              terminal_commit: String.duplicate("#{n}", 40),
              deadline_at: DateTime.add(at, 7200),
              admitted_at: at,
              started_at: DateTime.add(at, 5),
              finished_at: DateTime.add(at, 610),
              transparency_tier: tier,
              artifact_link_id: link && link.id,
              inserted_at: %{at | microsecond: {0, 6}},
              updated_at: %{at | microsecond: {0, 6}}
            },
            attrs
          )
        )
      )

    link = link && Repo.update!(ArtifactLink.bind_changeset(link, assignment.id))

    Repo.insert!(%IssueEvidence{
      commit_sha: String.duplicate("#{n}f", 20),
      family: "deployment",
      receipt_id: "rcpt_#{n}",
      plane: "tenant",
      environment: "acme-production-eu",
      result: "passed",
      actor: %{"type" => "user", "id" => "SECRET-actor-#{n}"},
      source: "closing_reference",
      repository_id: ctx.repository.id,
      issue_id: ctx.issue.id,
      assignment_id: assignment.id,
      transparency_tier: tier,
      artifact_link_id: link && link.id,
      inserted_at: DateTime.add(at, 700)
    })

    Repo.insert!(%Trace{
      user_id: ctx.owner.id,
      digest: "sha256:" <> String.duplicate("#{n}b", 32),
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
      inserted_at: DateTime.add(at, 800)
    })

    %{assignment | artifact_link: link}
  end

  defp job(ctx, n, at) do
    %Job{
      conversation_id: ctx.conversation.id,
      owner_visitor_id: "SECRET-visitor",
      machine_id: ctx.machine.id,
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
      status: Enum.at(~w(completed failed completed running), n - 1),
      report: "Attempt #{n}: fixed the rounding in lib/billing.ex",
      error_code: if(n == 2, do: "tests_failed"),
      model_id: "model-x",
      instruction_digest: "SECRET-instruction-digest",
      tool_catalog_digest: "SECRET-catalog-digest",
      memory_snapshot_ref: "SECRET-memory",
      tool_call_count: 10 + n,
      continuation_count: n,
      usage: %{"input_tokens" => 1000 * n, "output_tokens" => 200 * n},
      owner_node: "SECRET-node@internal",
      generation: n,
      report_message_id: "SECRET-report-message",
      started_at: DateTime.add(at, 5),
      completed_at: if(n == 4, do: nil, else: DateTime.add(at, 600))
    }
  end
end
