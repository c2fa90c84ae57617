# Where the project's time goes, for the rows closest to their goals: the
# seed, the project, the bare NIF call it makes (or made before its answer
# was compiled in), and the wrapper's own Elixir work.
#
#     MIX_BUILD_ROOT=/tmp/build_bench MIX_ENV=prod mix run bench/profile.exs
#
# Same environment knobs as run.exs (BENCH_ROUNDS, BENCH_TARGET_MS,
# BENCH_ONLY matched against the group title, BENCH_MAX_LOAD).
root = Path.expand("..", __DIR__)
Code.require_file(Path.join(root, "../shared/reference/load.exs"))
Code.require_file(Path.join(__DIR__, "support/harness.exs"))
Code.require_file(Path.join(__DIR__, "support/fixtures.exs"))

defmodule Bench.Profile do
  @moduledoc false
  alias Bench.{Fixtures, Harness}
  alias OpenAgents.Delegations.Target
  alias OpenAgents.Transparency.WorkDisclosure
  alias OpenAgentsPolicy.{Host, Native}

  defp c(mod, fun, args), do: Harness.calls(mod, fun, [args])

  def groups do
    member = Fixtures.member_viewer()
    owner = Fixtures.owner_viewer()
    record = Fixtures.attempt_record(1, Fixtures.link(1))
    revoked = Fixtures.attempt_record(3, Fixtures.link(3, revoked_at: Fixtures.ts(9)))
    source = Fixtures.attempt_source(record)
    job = Fixtures.work_job_source(1)
    repo = Fixtures.repository()
    [_op, member_user, _stranger, _nil] = Fixtures.users()

    attrs = %{
      account_id: "acct-1",
      repository_id: "repo-1",
      artifact_type: "attempt",
      artifact_ref: "id",
      tier: "ledger",
      consent: %{"granted_by" => "requesting_principal"},
      authority_snapshot: %{}
    }

    attempts = Fixtures.page(200)
    [machine_active, _revoked, _revoked_at, machine_pending] = Fixtures.machines()

    [
      {"NIF call floor",
       [
         {"Native.ladder_rank(:glass): atom in, small int out",
          c(Native, :ladder_rank, [:glass])},
         {"Native.ladder_name(:glass): atom in, atom out", c(Native, :ladder_name, [:glass])},
         {"Native.families(): 4-atom list out", c(Native, :families, [])},
         {"Native.box_lifecycle(\"idle\"): binary in, new binary out",
          c(Native, :box_lifecycle, ["idle"])},
         {"Elixir remote call returning a literal (Target.kinds/0)", c(Target, :kinds, [])}
       ]},
      {"box_lifecycle: known word vs unknown word",
       [
         {"seed (\"idle\")", c(Reference.Target, :box_lifecycle, ["idle"])},
         {"project (\"idle\": a compiled clause)", c(Target, :box_lifecycle, ["idle"])},
         {"  seed (\"bogus\")", c(Reference.Target, :box_lifecycle, ["bogus"])},
         {"  project (\"bogus\": the core's Unrecognized answer, compiled)",
          c(Target, :box_lifecycle, ["bogus"])},
         {"  bare NIF Native.box_lifecycle(\"bogus\")", c(Native, :box_lifecycle, ["bogus"])}
       ]},
      {"computer_lifecycle(machine, online?)",
       [
         {"seed (active, online)",
          c(Reference.Target, :computer_lifecycle, [machine_active, true])},
         {"project (active, online: a compiled clause)",
          c(Target, :computer_lifecycle, [machine_active, true])},
         {"  seed (status \"pending\")",
          c(Reference.Target, :computer_lifecycle, [machine_pending, true])},
         {"  project (status \"pending\": a NIF call)",
          c(Target, :computer_lifecycle, [machine_pending, true])},
         {"  bare NIF Native.computer_lifecycle(\"pending\", nil, true)",
          c(Native, :computer_lifecycle, ["pending", nil, true])}
       ]},
      {"viewer(repo, member user)",
       [
         {"seed", c(Reference.WorkDisclosure, :viewer, [repo, member_user])},
         {"project", c(WorkDisclosure, :viewer, [repo, member_user])},
         {"  Host.relationship/2 (two host calls through the configured modules)",
          c(Host, :relationship, [repo, member_user])},
         {"  bare NIF Native.viewer(:member, id) (what the table replaced)",
          c(Native, :viewer, [:member, "acct-2"])}
       ]},
      {"project(:attempt, 35-key source, :ledger)",
       [
         {"seed", c(Reference.WorkDisclosure, :project, [:attempt, source, :ledger])},
         {"project (compiled clause over the core's fields)",
          c(WorkDisclosure, :project, [:attempt, source, :ledger])},
         {"  bare NIF Native.project/4 (the per-call path, for a viewer as tier)",
          c(Native, :project, [:attempt, source, :ledger, nil])}
       ]},
      {"project(:work_job, 30-key source, :glass)",
       [
         {"seed", c(Reference.WorkDisclosure, :project, [:work_job, job, :glass])},
         {"project", c(WorkDisclosure, :project, [:work_job, job, :glass])},
         {"  bare NIF Native.project/4", c(Native, :project, [:work_job, job, :glass, nil])}
       ]},
      {"effective_tier(linked record, member)",
       [
         {"seed", c(Reference.WorkDisclosure, :effective_tier, [record, member])},
         {"project", c(WorkDisclosure, :effective_tier, [record, member])},
         {"  bare NIF Native.effective_tier/4",
          c(Native, :effective_tier, [record.artifact_link, "ledger", member, nil])},
         {"  Host.user_admin(viewer map)", c(Host, :user_admin, [member])}
       ]},
      {"effective_tier(linked record, owner)",
       [
         {"seed", c(Reference.WorkDisclosure, :effective_tier, [record, owner])},
         {"project", c(WorkDisclosure, :effective_tier, [record, owner])},
         {"  bare NIF Native.effective_tier/4",
          c(Native, :effective_tier, [record.artifact_link, "ledger", owner, nil])}
       ]},
      {"effective_tier(revoked link, member)",
       [
         {"seed", c(Reference.WorkDisclosure, :effective_tier, [revoked, member])},
         {"project", c(WorkDisclosure, :effective_tier, [revoked, member])},
         {"  bare NIF Native.effective_tier/4",
          c(Native, :effective_tier, [revoked.artifact_link, "ledger", member, nil])}
       ]},
      {"link_for_attempt(repo, agent principal)",
       [
         {"seed",
          c(Reference.WorkDisclosure, :link_for_attempt, [
            repo,
            %{"type" => "agent", "id" => "a7"},
            %{}
          ])},
         {"project",
          c(WorkDisclosure, :link_for_attempt, [repo, %{"type" => "agent", "id" => "a7"}, %{}])},
         {"  bare NIF Native.attempt_link/4 ({:error, the core's sentence})",
          c(Native, :attempt_link, [repo, "agent", "a7", %{}])}
       ]},
      {"link_for_attempt(repo, user principal)",
       [
         {"seed",
          c(Reference.WorkDisclosure, :link_for_attempt, [
            repo,
            %{"type" => "user", "id" => "acct-1"},
            %{}
          ])},
         {"project",
          c(WorkDisclosure, :link_for_attempt, [repo, %{"type" => "user", "id" => "acct-1"}, %{}])},
         {"  bare NIF Native.attempt_link/4",
          c(Native, :attempt_link, [repo, "user", "acct-1", %{}])},
         {"  Host.insert_link(attrs)", c(Host, :insert_link, [attrs])}
       ]},
      {"page of 200 attempts, owner viewer (per page)",
       [
         {"seed",
          Harness.page(Reference.WorkDisclosure, Reference.WorkDisclosure, attempts, owner)},
         {"project", Harness.page(WorkDisclosure, WorkDisclosure, attempts, owner)}
       ]}
    ]
  end

  def main do
    rounds = Harness.env_int("BENCH_ROUNDS", 7)
    target_ms = Harness.env_int("BENCH_TARGET_MS", 30)
    only = System.get_env("BENCH_ONLY")
    Harness.wait_for_quiet()

    IO.puts(
      "openagents_policy profile: #{rounds} rounds, ~#{target_ms} ms samples, medians; load #{Harness.loadavg()}"
    )

    IO.puts(Harness.revision() <> "\n")

    groups =
      groups()
      |> Enum.with_index()
      |> Enum.filter(fn {{title, _}, _} -> only == nil or Regex.match?(~r/#{only}/, title) end)

    rows =
      Enum.flat_map(groups, fn {{title, sides}, g} ->
        compiled =
          sides
          |> Enum.with_index()
          |> Enum.map(fn {{label, spec}, i} ->
            {i, {label, Harness.compile(Module.concat([Bench.Gen, "P#{g}", "S#{i}"]), spec)}}
          end)

        check_parity(title, compiled)

        timings =
          Harness.measure(Enum.map(compiled, fn {i, {_l, m}} -> {i, m} end), rounds, target_ms)

        medians = Map.new(timings, fn {i, list} -> {i, Harness.median(list)} end)
        seed = if match?([{0, {"seed" <> _, _}} | _], compiled), do: medians[0]
        IO.write(:stderr, "  #{title}\n")

        [[title, "", "", ""]] ++
          for {i, {label, _}} <- compiled do
            ratio = if seed, do: Harness.ratio(seed / medians[i]), else: ""
            ["", label, Harness.ns(medians[i]), ratio]
          end
      end)

    Harness.table(["group", "side", "ns/call", "seed/side"], rows, [2, 3])
    IO.puts("\nload at end: #{Harness.loadavg()}")
  end

  # Seed and project must answer alike.
  defp check_parity(title, [{_, {"seed" <> _, {seed, _}}}, {_, {"project" <> _, {proj, _}}} | _]) do
    if seed.once() != proj.once(), do: IO.puts("PARITY MISMATCH seed/project in #{title}")
  end

  defp check_parity(_title, _compiled), do: :ok
end

Bench.Profile.main()
