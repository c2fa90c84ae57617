# Where the project's time goes, for the rows bench/run.exs reports as
# misses: the seed, the project's wrapper, the bare NIF call the wrapper
# makes, the wrapper's own Elixir work, and prototypes of the proposed fixes
# (bench/support/what_if.exs; their answers still come from the NIF, filled
# in at compile time).
#
#     MIX_BUILD_ROOT=/tmp/build_bench MIX_ENV=prod mix run bench/profile.exs
#
# Same environment knobs as run.exs (BENCH_ROUNDS, BENCH_TARGET_MS,
# BENCH_ONLY matched against the group title, BENCH_MAX_LOAD).
root = Path.expand("..", __DIR__)
Code.require_file(Path.join(root, "../shared/reference/load.exs"))
Code.require_file(Path.join(__DIR__, "support/harness.exs"))
Code.require_file(Path.join(__DIR__, "support/fixtures.exs"))
Code.require_file(Path.join(__DIR__, "support/what_if.exs"))

defmodule Bench.Profile do
  @moduledoc false
  alias Bench.{Fixtures, Harness}
  alias Bench.WhatIf
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
    :persistent_term.put({Bench.Profile, :accounts}, OpenAgents.Accounts)

    [
      {"NIF call floor",
       [
         {"Native.ladder_rank(:glass): atom in, small int out",
          c(Native, :ladder_rank, [:glass])},
         {"Native.ladder_name(:glass): atom in, atom out", c(Native, :ladder_name, [:glass])},
         {"Native.families(): 4-atom list out (Vec clone + list)", c(Native, :families, [])},
         {"Native.never(:attempt): 14-atom list out", c(Native, :never, [:attempt])},
         {"Native.box_lifecycle(\"idle\"): binary in, new binary out",
          c(Native, :box_lifecycle, ["idle"])},
         {"Native.delegation_seam(\"active\"): 2 keys + list, 4 new binaries",
          c(Native, :delegation_seam, ["active"])},
         {"Native.seam(\"box\", \"active\", true): 5 keys, 9 new binaries",
          c(Native, :seam, ["box", "active", true])},
         {"Elixir remote call returning a literal (Target.kinds/0)", c(Target, :kinds, [])}
       ]},
      {"box_lifecycle(\"idle\")",
       [
         {"seed", c(Reference.Target, :box_lifecycle, ["idle"])},
         {"project wrapper", c(Target, :box_lifecycle, ["idle"])},
         {"  bare NIF Native.box_lifecycle/1", c(Native, :box_lifecycle, ["idle"])},
         {"  what-if: table clauses filled from NIF at compile time",
          c(WhatIf.Target, :box_lifecycle, ["idle"])},
         {"  what-if: NIF returns index, elem/2 of literal tuple (proxy)",
          c(WhatIf.Target, :indexed, [:glass])}
       ]},
      {"run_lifecycle: known word vs unknown word",
       [
         {"seed (\"timed_out\")", c(Reference.Target, :run_lifecycle, ["timed_out"])},
         {"project wrapper (\"timed_out\")", c(Target, :run_lifecycle, ["timed_out"])},
         {"  seed (\"bogus\")", c(Reference.Target, :run_lifecycle, ["bogus"])},
         {"  project wrapper (\"bogus\": the core builds and drops a Refusal)",
          c(Target, :run_lifecycle, ["bogus"])},
         {"  what-if: table clauses (\"timed_out\")",
          c(WhatIf.Target, :run_lifecycle, ["timed_out"])}
       ]},
      {"computer_lifecycle(machine, online?)",
       [
         {"seed (active, online)",
          c(Reference.Target, :computer_lifecycle, [machine_active, true])},
         {"project wrapper (active, online)",
          c(Target, :computer_lifecycle, [machine_active, true])},
         {"  bare NIF Native.computer_lifecycle(\"active\", nil, true)",
          c(Native, :computer_lifecycle, ["active", nil, true])},
         {"  seed (status \"pending\")",
          c(Reference.Target, :computer_lifecycle, [machine_pending, true])},
         {"  project wrapper (status \"pending\")",
          c(Target, :computer_lifecycle, [machine_pending, true])},
         {"  what-if: 8 table clauses (active, online)",
          c(WhatIf.Target, :computer_lifecycle, [machine_active, true])}
       ]},
      {"custody(\"computer\")",
       [
         {"seed", c(Reference.Target, :custody, ["computer"])},
         {"project wrapper", c(Target, :custody, ["computer"])},
         {"  bare NIF Native.custody/1", c(Native, :custody, ["computer"])},
         {"  what-if: table clauses", c(WhatIf.Target, :custody, ["computer"])}
       ]},
      {"seam(\"computer\", \"active\", false)",
       [
         {"seed", c(Reference.Target, :seam, ["computer", "active", false])},
         {"project wrapper", c(Target, :seam, ["computer", "active", false])},
         {"  bare NIF Native.seam/3", c(Native, :seam, ["computer", "active", false])},
         {"  what-if: 28 literal maps filled from NIF",
          c(WhatIf.Target, :seam, ["computer", "active", false])}
       ]},
      {"delegation_seam(\"active\")",
       [
         {"seed", c(Reference.Target, :delegation_seam, ["active"])},
         {"project wrapper", c(Target, :delegation_seam, ["active"])},
         {"  bare NIF Native.delegation_seam/1", c(Native, :delegation_seam, ["active"])},
         {"  what-if: 6 literal maps", c(WhatIf.Target, :delegation_seam, ["active"])}
       ]},
      {"never(:attempt)",
       [
         {"seed", c(Reference.WorkDisclosure, :never, [:attempt])},
         {"project wrapper", c(WorkDisclosure, :never, [:attempt])},
         {"  bare NIF Native.never/1", c(Native, :never, [:attempt])},
         {"  what-if: literal list per family", c(WhatIf.Disclosure, :never, [:attempt])}
       ]},
      {"viewer(repo, member user)",
       [
         {"seed", c(Reference.WorkDisclosure, :viewer, [repo, member_user])},
         {"project wrapper", c(WorkDisclosure, :viewer, [repo, member_user])},
         {"  Application.get_env/3 (Host does 2 per member call)",
          c(Application, :get_env, [:openagents_policy, :accounts, OpenAgents.Accounts])},
         {"  :persistent_term.get/1 (alternative)",
          c(:persistent_term, :get, [{Bench.Profile, :accounts}])},
         {"  Host.admin?/1", c(Host, :admin?, [member_user])},
         {"  Host.member?/2", c(Host, :member?, [repo, member_user])},
         {"  bare NIF Native.viewer(:member, id)", c(Native, :viewer, [:member, "acct-2"])},
         {"  what-if: modules at compile time + literal descriptor",
          c(WhatIf.Disclosure, :viewer, [repo, member_user])}
       ]},
      {"viewer(repo, nil)",
       [
         {"seed", c(Reference.WorkDisclosure, :viewer, [repo, nil])},
         {"project wrapper", c(WorkDisclosure, :viewer, [repo, nil])},
         {"  bare NIF Native.viewer(:anonymous, nil)", c(Native, :viewer, [:anonymous, nil])},
         {"  what-if: literal descriptor", c(WhatIf.Disclosure, :viewer, [repo, nil])}
       ]},
      {"fields_at(:attempt, :ledger)",
       [
         {"seed", c(Reference.WorkDisclosure, :fields_at, [:attempt, :ledger])},
         {"project wrapper", c(WorkDisclosure, :fields_at, [:attempt, :ledger])},
         {"  bare NIF Native.fields_at/3", c(Native, :fields_at, [:attempt, :ledger, nil])},
         {"  Host.user_admin(:ledger)", c(Host, :user_admin, [:ledger])},
         {"  what-if: literal list per (family, tier atom | nil)",
          c(WhatIf.Disclosure, :fields_at, [:attempt, :ledger])}
       ]},
      {"project(:attempt, 35-key source, :ledger)",
       [
         {"seed", c(Reference.WorkDisclosure, :project, [:attempt, source, :ledger])},
         {"project wrapper", c(WorkDisclosure, :project, [:attempt, source, :ledger])},
         {"  bare NIF Native.project/4", c(Native, :project, [:attempt, source, :ledger, nil])},
         {"  of which bare NIF Native.fields_at/3 (decode + admit + list)",
          c(Native, :fields_at, [:attempt, :ledger, nil])},
         {"  what-if: map literal of Map.get per (family, tier)",
          c(WhatIf.Disclosure, :project, [:attempt, source, :ledger])},
         {"  what-if: Map.merge(literal nils, Map.take(source, literal))",
          c(WhatIf.Disclosure, :project_take, [:attempt, source, :ledger])}
       ]},
      {"project(:work_job, 30-key source, :glass)",
       [
         {"seed", c(Reference.WorkDisclosure, :project, [:work_job, job, :glass])},
         {"project wrapper", c(WorkDisclosure, :project, [:work_job, job, :glass])},
         {"  bare NIF Native.project/4", c(Native, :project, [:work_job, job, :glass, nil])},
         {"  what-if: map literal of Map.get",
          c(WhatIf.Disclosure, :project, [:work_job, job, :glass])}
       ]},
      {"effective_tier(linked record, member)",
       [
         {"seed", c(Reference.WorkDisclosure, :effective_tier, [record, member])},
         {"project wrapper", c(WorkDisclosure, :effective_tier, [record, member])},
         {"  bare NIF Native.effective_tier/3",
          c(Native, :effective_tier, [record, member, nil])},
         {"  Host.user_admin(viewer map)", c(Host, :user_admin, [member])}
       ]},
      {"effective_tier(linked record, owner)",
       [
         {"seed", c(Reference.WorkDisclosure, :effective_tier, [record, owner])},
         {"project wrapper", c(WorkDisclosure, :effective_tier, [record, owner])},
         {"  bare NIF Native.effective_tier/3", c(Native, :effective_tier, [record, owner, nil])}
       ]},
      {"effective_tier(revoked link, member)",
       [
         {"seed", c(Reference.WorkDisclosure, :effective_tier, [revoked, member])},
         {"project wrapper", c(WorkDisclosure, :effective_tier, [revoked, member])},
         {"  bare NIF Native.effective_tier/3",
          c(Native, :effective_tier, [revoked, member, nil])}
       ]},
      {"link_for_attempt(repo, agent principal)",
       [
         {"seed",
          c(Reference.WorkDisclosure, :link_for_attempt, [
            repo,
            %{"type" => "agent", "id" => "a7"},
            %{}
          ])},
         {"project wrapper",
          c(WorkDisclosure, :link_for_attempt, [repo, %{"type" => "agent", "id" => "a7"}, %{}])},
         {"  bare NIF Native.attempt_link/3 ({:error, formatted string})",
          c(Native, :attempt_link, [repo, %{"type" => "agent", "id" => "a7"}, %{}])}
       ]},
      {"link_for_attempt(repo, user principal)",
       [
         {"seed",
          c(Reference.WorkDisclosure, :link_for_attempt, [
            repo,
            %{"type" => "user", "id" => "acct-1"},
            %{}
          ])},
         {"project wrapper",
          c(WorkDisclosure, :link_for_attempt, [repo, %{"type" => "user", "id" => "acct-1"}, %{}])},
         {"  bare NIF Native.attempt_link/3",
          c(Native, :attempt_link, [repo, %{"type" => "user", "id" => "acct-1"}, %{}])},
         {"  Host.insert_link(attrs) (2 x Application.get_env + host)",
          c(Host, :insert_link, [attrs])}
       ]},
      {"page of 200 attempts, owner viewer (per page)",
       [
         {"seed",
          Harness.page(Reference.WorkDisclosure, Reference.WorkDisclosure, attempts, owner)},
         {"project wrapper", Harness.page(WorkDisclosure, WorkDisclosure, attempts, owner)},
         {"  what-if: tabled project/3, NIF effective_tier/2",
          Harness.page(WorkDisclosure, WhatIf.Disclosure, attempts, owner)}
       ]},
      {"page of 200 attempts, member viewer (per page)",
       [
         {"seed",
          Harness.page(Reference.WorkDisclosure, Reference.WorkDisclosure, attempts, member)},
         {"project wrapper", Harness.page(WorkDisclosure, WorkDisclosure, attempts, member)},
         {"  what-if: tabled project/3, NIF effective_tier/2",
          Harness.page(WorkDisclosure, WhatIf.Disclosure, attempts, member)}
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

  # The what-if prototypes must answer exactly what the project answers.
  defp check_parity(title, compiled) do
    results =
      for {_i, {label, {mod, _}}} <- Enum.take(compiled, 2),
          String.starts_with?(label, "seed") or String.starts_with?(label, "project wrapper"),
          do: mod.once()

    whatifs = for {_i, {"  what-if" <> _ = label, {mod, _}}} <- compiled, do: {label, mod.once()}

    case results do
      [seed, proj | _] ->
        if seed != proj, do: IO.puts("PARITY MISMATCH seed/project in #{title}")

        for {label, r} <- whatifs,
            r != proj,
            not String.contains?(label, "proxy"),
            do: IO.puts("PARITY MISMATCH #{String.trim(label)} in #{title}")

      _ ->
        :ok
    end
  end
end

Bench.Profile.main()
