defmodule HostApp.AttemptsPageTest do
  use ExUnit.Case, async: true

  alias HostApp.{AttemptsPage, Fixtures, SeedRules}
  alias OpenAgents.Transparency.WorkDisclosure

  @readers [:anonymous, :stranger, :member, :owner, :operator]

  setup do
    %{repository: repository, readers: readers} = Fixtures.world()
    owner = readers.owner
    user_principal = %{"type" => "user", "id" => owner.id}
    agent_principal = %{"type" => "agent", "id" => "agent-7"}

    live = Fixtures.link(owner.id, repository.id)
    revoked = Fixtures.link(owner.id, repository.id, %{revoked_at: ~U[2026-08-26 00:00:00Z]})

    linked = Fixtures.attempt(repository.id, user_principal, live)
    # An agent asked: no link, and the tier column alone decides.
    agent = Fixtures.attempt(repository.id, agent_principal, nil)
    # The association was not preloaded: the tier column decides, here `pulse`.
    not_loaded =
      Fixtures.attempt(repository.id, user_principal, nil, %{
        artifact_link: Ecto.Association.NotLoaded.of(OpenAgents.Forge.Assignment, :artifact_link),
        transparency_tier: "pulse"
      })

    # A box attempt with no work job.
    jobless =
      Fixtures.attempt(repository.id, user_principal, live, %{work_job: nil, target_kind: "box"})

    withdrawn = Fixtures.attempt(repository.id, user_principal, revoked)

    %{
      repository: repository,
      readers: readers,
      linked: linked,
      agent: agent,
      not_loaded: not_loaded,
      jobless: jobless,
      withdrawn: withdrawn
    }
  end

  defp render(ctx, reader, attempts),
    do:
      AttemptsPage.render(ctx.repository, ctx.readers[reader], [
        %{id: "issue-1", attempts: attempts}
      ])

  defp only_row(ctx, reader, attempt) do
    %{issues: [%{attempts: rows}]} = render(ctx, reader, [attempt])
    assert [row] = rows
    row
  end

  # What each reader's tier is for each kind of attempt, from the seed:
  # viewer/2 gives pulse/pulse/ledger/pulse(owner is not a member)/glass+admin;
  # a live link raises its owner and an operator to glass and clamps the rest
  # from ledger; no link clamps the tier column and raises only an operator.
  @expected %{
    linked: %{
      anonymous: :pulse,
      stranger: :pulse,
      member: :ledger,
      owner: :glass,
      operator: :glass
    },
    agent: %{
      anonymous: :pulse,
      stranger: :pulse,
      member: :ledger,
      owner: :pulse,
      operator: :glass
    },
    not_loaded: %{
      anonymous: :pulse,
      stranger: :pulse,
      member: :pulse,
      owner: :pulse,
      operator: :glass
    }
  }

  test "viewer/2 describes each kind of reader once per request", ctx do
    %{readers: r} = ctx

    assert render(ctx, :anonymous, []).viewer == %{account_id: nil, tier: :pulse}
    assert render(ctx, :stranger, []).viewer == %{account_id: r.stranger.id, tier: :pulse}
    assert render(ctx, :member, []).viewer == %{account_id: r.member.id, tier: :ledger}
    assert render(ctx, :owner, []).viewer == %{account_id: r.owner.id, tier: :pulse}

    assert render(ctx, :operator, []).viewer ==
             %{account_id: r.operator.id, tier: :glass, admin: true}
  end

  for kind <- [:linked, :agent, :not_loaded], reader <- @readers do
    @kind kind
    @reader reader
    @tier @expected[kind][reader]
    test "#{reader} reads a #{kind} attempt and its work job at #{@tier}", ctx do
      attempt = ctx[@kind]
      row = only_row(ctx, @reader, attempt)

      assert row.tier == @tier
      assert Enum.sort(Map.keys(row.attempt)) == SeedRules.fields(:attempt, @tier)
      assert Enum.sort(Map.keys(row.work_job)) == SeedRules.fields(:work_job, @tier)

      # Values come from the record, by field name; the requester's kind,
      # never its id.
      for {field, value} <- row.attempt, field != :requester_kind do
        assert value == Map.fetch!(attempt, field)
      end

      assert row.attempt.requester_kind == attempt.requesting_principal["type"]

      for {field, value} <- row.work_job, field != :budget do
        assert value == Map.fetch!(attempt.work_job, field)
      end

      if @tier in [:ledger, :glass] do
        assert row.work_job.budget ==
                 %{
                   "wall_clock_seconds" => 1800,
                   "max_report_bytes" => 8192,
                   "max_prompt_bytes" => 65_536
                 }
      end
    end
  end

  test "stranger and anonymous see pulse only: that an attempt ran and how it ended", ctx do
    for reader <- [:anonymous, :stranger] do
      row = only_row(ctx, reader, ctx.linked)
      assert row.attempt.state == "completed"
      assert row.attempt.target_kind == "computer"
      assert row.attempt.requester_kind == "user"
      refute Map.has_key?(row.attempt, :branch)
      refute Map.has_key?(row.attempt, :terminal_commit)
      refute Map.has_key?(row.work_job, :report)
      refute Map.has_key?(row.work_job, :budget)
      assert row.work_job.status == "completed"
    end
  end

  test "a member sees the ledger but not the report", ctx do
    row = only_row(ctx, :member, ctx.linked)
    assert row.attempt.terminal_commit == "0123456789abcdef0123456789abcdef01234567"
    assert row.attempt.branch == "fix/billing-off-by-one"
    assert row.work_job.tool_call_count == 14
    refute Map.has_key?(row.work_job, :report)
    refute Map.has_key?(row.work_job, :usage)
    refute Map.has_key?(row.work_job, :model_id)
  end

  test "the owner and an operator see glass, report included", ctx do
    for reader <- [:owner, :operator] do
      row = only_row(ctx, reader, ctx.linked)
      assert row.work_job.report == "Fixed the off-by-one in lib/billing.ex"
      assert row.work_job.usage == %{"input_tokens" => 1000, "output_tokens" => 200}
      assert row.work_job.model_id == "model-x"
    end
  end

  test "the ladder is monotone: pulse within ledger within glass", ctx do
    keys = fn reader ->
      row = only_row(ctx, reader, ctx.linked)
      MapSet.new(Map.keys(row.attempt) ++ Enum.map(Map.keys(row.work_job), &{:job, &1}))
    end

    assert MapSet.subset?(keys.(:stranger), keys.(:member))
    assert MapSet.subset?(keys.(:member), keys.(:owner))
    assert keys.(:anonymous) == keys.(:stranger)
    assert keys.(:owner) == keys.(:operator)
  end

  test "never-listed columns never appear, for any reader or attempt", ctx do
    attempt_never =
      SeedRules.never(:attempt) ++ [:requesting_principal, :__meta__, :work_job, :artifact_link]

    job_never = SeedRules.never(:work_job) ++ [:budget_snapshot, :__meta__]

    for reader <- @readers,
        attempt <- [ctx.linked, ctx.agent, ctx.not_loaded, ctx.jobless] do
      %{issues: [%{attempts: [row]}]} = render(ctx, reader, [attempt])
      assert attempt_never -- Map.keys(row.attempt) == attempt_never

      if row.work_job, do: assert(job_never -- Map.keys(row.work_job) == job_never)

      # Not under another name either: no never-listed value is anywhere in it.
      refute inspect(row, limit: :infinity, printable_limit: :infinity) =~ "SECRET"
    end
  end

  test "a revoked link takes the attempt off the page for everyone, operators included", ctx do
    for reader <- @readers do
      %{issues: [%{attempts: rows}]} = render(ctx, reader, [ctx.linked, ctx.withdrawn, ctx.agent])
      assert length(rows) == 2
      refute Enum.any?(rows, &(&1.attempt.id == ctx.withdrawn.id))
    end

    operator = WorkDisclosure.viewer(ctx.repository, ctx.readers.operator)
    assert WorkDisclosure.effective_tier(ctx.withdrawn, operator) == :dark

    source = ctx.withdrawn |> Map.from_struct() |> Map.put(:requester_kind, "user")

    assert WorkDisclosure.project(:attempt, source, :dark) == nil
    assert AttemptsPage.row(ctx.withdrawn, operator) == []
  end

  test "an attempt with no work job projects the attempt alone", ctx do
    row = only_row(ctx, :member, ctx.jobless)
    assert row.attempt.target_kind == "box"
    assert row.work_job == nil
  end

  test "a page lists every attempt of up to 25 issues", ctx do
    %{repository: repository, readers: readers} = ctx
    principal = %{"type" => "user", "id" => readers.owner.id}

    issues =
      for n <- 1..26 do
        attempts =
          for _ <- 1..rem(n, 4) do
            Fixtures.attempt(
              repository.id,
              principal,
              Fixtures.link(readers.owner.id, repository.id)
            )
          end

        %{id: "issue-#{n}", attempts: attempts}
      end

    page = AttemptsPage.render(repository, readers.member, issues)
    assert length(page.issues) == 25
    assert page.more_issues == 1
    assert Enum.map(page.issues, & &1.id) == Enum.map(Enum.take(issues, 25), & &1.id)

    for {issue, rendered} <- Enum.zip(issues, page.issues) do
      assert Enum.map(rendered.attempts, & &1.attempt.id) == Enum.map(issue.attempts, & &1.id)
      assert Enum.all?(rendered.attempts, &(&1.tier == :ledger))
    end
  end
end
