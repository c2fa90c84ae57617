# Seed vs project, every public function of OpenAgents.Delegations.Target and
# OpenAgents.Transparency.WorkDisclosure, plus the host's page workload.
#
#     MIX_BUILD_ROOT=/tmp/build_bench MIX_ENV=prod mix run bench/run.exs
#
# Environment:
#   BENCH_ROUNDS=9       rounds per row (median taken; at least 7 is sensible)
#   BENCH_TARGET_MS=30   wall time of one sample (iterations are calibrated)
#   BENCH_ONLY=regex     only rows whose function or input matches
#   BENCH_MAX_LOAD=0.5   wait (up to BENCH_MAX_WAIT s) for a quiet machine first
#
# Reports; never fails: exits 0 whatever the ratios, and ends with
# "all goals met" or the list of misses.
root = Path.expand("..", __DIR__)
Code.require_file(Path.join(root, "../shared/reference/load.exs"))
Code.require_file(Path.join(__DIR__, "support/harness.exs"))
Code.require_file(Path.join(__DIR__, "support/fixtures.exs"))

defmodule Bench.Run do
  @moduledoc false
  alias Bench.{Fixtures, Harness}

  @t_seed Reference.Target
  @t_proj OpenAgents.Delegations.Target
  @w_seed Reference.WorkDisclosure
  @w_proj OpenAgents.Transparency.WorkDisclosure

  # ── the rows ───────────────────────────────────────────────────────────

  def cases do
    target_cases() ++ disclosure_cases() ++ page_cases() ++ project_only_cases()
  end

  defp pair(which, fun, arity, input, goal, arglists) do
    {seed, proj} = if which == :target, do: {@t_seed, @t_proj}, else: {@w_seed, @w_proj}

    %{
      fun: "#{fun}/#{arity}",
      input: input,
      goal: goal,
      sides: [
        seed: Harness.calls(seed, fun, arglists),
        project: Harness.calls(proj, fun, arglists)
      ]
    }
  end

  # The rows that must read a record: beside seed and project, the cheapest
  # NIF call there is (an atom in, a small integer out), as many times per
  # iteration as the row makes calls, so the floor under their ratio shows.
  defp with_floor(%{sides: sides} = row) do
    {:calls, calls} = sides[:project]

    floor =
      Harness.calls(OpenAgentsPolicy.Native, :ladder_rank, Enum.map(calls, fn _ -> [:glass] end))

    %{row | sides: sides ++ [nif_floor: floor]}
  end

  defp target_cases do
    box_states =
      ~w(init provisioning provisioned cloning ready idle running archiving archived error queued)

    run_states = ~w(admitted dispatched running completed failed cancelled timed_out lost)
    job_statuses = ~w(queued running completed failed interrupted budget_exhausted cancelled)

    seams =
      for kind <- ~w(box computer),
          lifecycle <- ~w(cold queued starting active stopping failed destroyed),
          authorized <- [true, false],
          do: [kind, lifecycle, authorized]

    [
      pair(:target, :lifecycles, 0, "()", 1, [[]]),
      pair(:target, :delegation_lifecycles, 0, "()", 1, [[]]),
      pair(:target, :custodies, 0, "()", 1, [[]]),
      pair(:target, :kinds, 0, "()", 1, [[]]),
      pair(:target, :custody, 1, "box, computer", 1, [["box"], ["computer"]]),
      pair(:target, :runtime_class, 1, "box, computer", 1, [["box"], ["computer"]]),
      pair(
        :target,
        :box_lifecycle,
        1,
        "11 box states + \"bogus\"",
        1,
        Enum.map(box_states ++ ["bogus"], &[&1])
      ),
      pair(
        :target,
        :computer_lifecycle,
        2,
        "4 machines x online? true/false",
        0.25,
        for(m <- Fixtures.machines(), online <- [true, false], do: [m, online])
      )
      |> with_floor(),
      pair(
        :target,
        :run_lifecycle,
        1,
        "8 run states + \"bogus\"",
        1,
        Enum.map(run_states ++ ["bogus"], &[&1])
      ),
      pair(
        :target,
        :job_lifecycle,
        1,
        "7 statuses + \"stopping\"",
        1,
        Enum.map(job_statuses ++ ["stopping"], &[&1])
      ),
      pair(:target, :seam, 3, "2 kinds x 7 lifecycles x auth? (28)", 1, seams),
      pair(
        :target,
        :delegation_seam,
        1,
        "6 delegation lifecycles",
        1,
        Enum.map(~w(queued starting active succeeded failed cancelled), &[&1])
      )
    ]
  end

  defp disclosure_cases do
    families = ~w(attempt work_job evidence trace)a
    member = Fixtures.member_viewer()
    record = Fixtures.attempt_record(1, Fixtures.link(1))

    unlinked =
      Fixtures.attempt_record(2, nil)
      |> Map.put(:artifact_link, %Bench.NotLoaded{__field__: :artifact_link})

    revoked = Fixtures.attempt_record(3, Fixtures.link(3, revoked_at: Fixtures.ts(9)))
    source = Fixtures.attempt_source(record)
    job = Fixtures.work_job_source(1)

    [
      pair(:disclosure, :families, 0, "()", 1, [[]]),
      pair(:disclosure, :schedule, 0, "()", 1, [[]]),
      pair(:disclosure, :never, 1, "4 families", 1, Enum.map(families, &[&1])),
      pair(:disclosure, :source_columns, 1, "4 families", 1, Enum.map(families, &[&1])),
      pair(:disclosure, :tier_for, 2, "5 (family, field), 1 unknown", 1, [
        [:attempt, :branch],
        [:work_job, :report],
        [:work_job, :goal],
        [:trace, :digest],
        [:evidence, :environment]
      ]),
      pair(:disclosure, :fields_at, 2, "(:attempt, :ledger)", 20, [[:attempt, :ledger]]),
      pair(
        :disclosure,
        :fields_at,
        2,
        "4 families x :pulse/:ledger/:glass",
        20,
        for(f <- families, t <- [:pulse, :ledger, :glass], do: [f, t])
      ),
      pair(:disclosure, :fields_at, 2, "\"ledger\", nil, :dark, :bogus, viewer map", 20, [
        [:attempt, "ledger"],
        [:work_job, nil],
        [:attempt, :dark],
        [:evidence, :bogus],
        [:work_job, member]
      ]),
      pair(
        :disclosure,
        :viewer,
        2,
        "operator, member, stranger, nil user",
        0.5,
        Enum.map(Fixtures.users(), &[Fixtures.repository(), &1])
      ),
      pair(:disclosure, :effective_tier, 2, "live link, member viewer", 1, [[record, member]]),
      pair(:disclosure, :effective_tier, 2, "live link, owner viewer", 1, [
        [record, Fixtures.owner_viewer()]
      ]),
      pair(:disclosure, :effective_tier, 2, "live link, operator viewer", 1, [
        [record, Fixtures.operator_viewer()]
      ]),
      pair(:disclosure, :effective_tier, 2, "revoked link, member viewer", 0.25, [
        [revoked, member]
      ])
      |> with_floor(),
      pair(:disclosure, :effective_tier, 2, "no link (NotLoaded), member", 1, [[unlinked, member]]),
      pair(:disclosure, :link_for_attempt, 3, "user principal (mints)", 0.25, [
        [Fixtures.repository(), %{"type" => "user", "id" => "acct-1"}, %{"cwd" => "/src"}]
      ])
      |> with_floor(),
      pair(:disclosure, :link_for_attempt, 3, "agent principal (:none)", 0.25, [
        [Fixtures.repository(), %{"type" => "agent", "id" => "agent-7"}, %{}]
      ])
      |> with_floor(),
      pair(:disclosure, :project, 3, "attempt source (35 keys), :pulse", 10, [
        [:attempt, source, :pulse]
      ]),
      pair(:disclosure, :project, 3, "attempt source (35 keys), :ledger", 10, [
        [:attempt, source, :ledger]
      ]),
      pair(:disclosure, :project, 3, "attempt source (35 keys), :glass", 10, [
        [:attempt, source, :glass]
      ]),
      pair(:disclosure, :project, 3, "attempt source (35 keys), :dark", 10, [
        [:attempt, source, :dark]
      ]),
      pair(:disclosure, :project, 3, "work_job source (30 keys), :ledger *", 1, [
        [:work_job, job, :ledger]
      ]),
      pair(:disclosure, :project, 3, "work_job source (30 keys), :glass *", 1, [
        [:work_job, job, :glass]
      ]),
      pair(:disclosure, :project, 3, "evidence + trace sources, :ledger *", 1, [
        [:evidence, Fixtures.evidence_source(1), :ledger],
        [:trace, Fixtures.trace_source(1), :ledger]
      ])
    ]
  end

  defp page_cases do
    attempts = Fixtures.page(200)

    for {label, viewer} <- [
          {"member %{account_id: \"acct-2\", tier: :ledger}", Fixtures.member_viewer()},
          {"owner %{account_id: \"acct-1\", tier: :ledger}", Fixtures.owner_viewer()},
          {"anonymous %{account_id: nil, tier: :pulse}", Fixtures.anonymous_viewer()},
          {"operator (admin: true)", Fixtures.operator_viewer()}
        ] do
      %{
        fun: "page of 200 attempts",
        input: label,
        goal: 8,
        per: "page",
        sides: [
          seed: Harness.page(@w_seed, @w_seed, attempts, viewer),
          project: Harness.page(@w_proj, @w_proj, attempts, viewer)
        ]
      }
    end
  end

  # Public functions the seed does not have: timed, no ratio.
  defp project_only_cases do
    [
      %{
        fun: "classify/2",
        input: "(:attempt, its 25 columns)",
        goal: nil,
        sides: [
          project: Harness.calls(@w_proj, :classify, [[:attempt, Fixtures.attempt_columns()]])
        ]
      },
      %{
        fun: "schedule_json/0",
        input: "()",
        goal: nil,
        sides: [project: Harness.calls(@w_proj, :schedule_json, [[]])]
      }
    ]
  end

  # ── running ────────────────────────────────────────────────────────────

  def main do
    rounds = Harness.env_int("BENCH_ROUNDS", 9)
    target_ms = Harness.env_int("BENCH_TARGET_MS", 30)
    only = System.get_env("BENCH_ONLY")

    Harness.wait_for_quiet()

    cases =
      cases()
      |> Enum.with_index()
      |> Enum.filter(fn {c, _} ->
        only == nil or Regex.match?(~r/#{only}/, c.fun <> " " <> c.input)
      end)

    IO.puts("""
    openagents_policy bench: seed (Reference.*) vs project (OpenAgents.*)
    OTP #{System.otp_release()}, Elixir #{System.version()}, schedulers #{:erlang.system_info(:schedulers_online)}, \
    MIX_ENV=#{Mix.env()}
    #{rounds} rounds per row, samples of ~#{target_ms} ms, order alternated each round; \
    figures are medians over rounds
    #{Harness.revision()}
    load average at start: #{Harness.loadavg()}
    """)

    overhead = loop_overhead(rounds, target_ms)

    results =
      for {c, idx} <- cases do
        sides =
          for {label, spec} <- c.sides do
            {label, Harness.compile(Module.concat([Bench.Gen, "C#{idx}", label]), spec)}
          end

        parity = parity(sides)
        timings = Harness.measure(sides, rounds, target_ms)
        row = summarize(c, timings, parity)
        IO.write(:stderr, "  #{c.fun} #{c.input}: #{row.ratio_text}\n")
        row
      end

    IO.puts("load average at end: #{Harness.loadavg()}")

    IO.puts(
      "empty-loop overhead: #{Harness.ns(overhead)} ns per iteration (included in both sides)\n"
    )

    header = [
      "function",
      "input",
      "seed ns/call",
      "project ns/call",
      "NIF floor ns/call",
      "ratio",
      "round ratios",
      "goal",
      "result"
    ]

    rows =
      for r <- results do
        [
          r.fun,
          r.input,
          Harness.ns(r.seed),
          Harness.ns(r.project),
          Harness.ns(r.floor),
          r.ratio_text,
          r.range,
          r.goal_text,
          r.verdict
        ]
      end

    Harness.table(header, rows, [2, 3, 4, 5, 6, 7])

    IO.puts("""

    ratio = seed ns / project ns (higher is faster); goal is met when ratio >= goal.
    "round ratios" is the min..max of the per-round ratios. Rows with several
    inputs call each input once per iteration, unrolled; ns/call is per call
    (per page for the page rows: 200 x effective_tier + 2 x project).
    "PASS (same code)": seed and project compile the function to the same BEAM
    instructions (labels and lines aside), so the ratio is 1 but for noise.
    "NIF floor" (rows that must read a record): the same number of calls of
    Native.ladder_rank(:glass), the cheapest NIF call (atom in, small integer out).
    * the issue sets no goal for project/3 on other families' sources: never
      slower than the seed (>= 1) is applied.
    """)

    parity_failures = Enum.filter(results, &(&1.parity != :ok))

    for r <- parity_failures do
      IO.puts("PARITY MISMATCH #{r.fun} #{r.input}: #{inspect(r.parity, limit: 20)}")
    end

    misses = Enum.filter(results, &(&1.verdict == "FAIL"))

    if misses == [] do
      IO.puts("all goals met")
    else
      IO.puts(
        "goals missed: " <>
          Enum.map_join(
            misses,
            "; ",
            &"#{&1.fun} [#{&1.input}] ratio #{&1.ratio_text}, goal #{&1.goal_text}"
          )
      )
    end
  end

  defp loop_overhead(rounds, target_ms) do
    {mod, 1} = Harness.compile(Bench.Gen.Empty, {:quoted, [], [quote(do: :ok)]})

    Harness.measure([empty: {mod, 1}], rounds, target_ms)
    |> Map.fetch!(:empty)
    |> Harness.median()
  end

  # Whether seed and project compile the row's function to the same BEAM
  # instructions (labels, lines and the module's own name aside): then neither
  # can be slower, and a ratio under 1 is the machine's noise.
  defp same_code?(%{sides: sides}) do
    with {:calls, [{seed, fun, args} | _]} <- sides[:seed],
         {:calls, [{proj, ^fun, ^args} | _]} <- sides[:project] do
      instructions(seed, fun, length(args)) == instructions(proj, fun, length(args))
    else
      _ -> false
    end
  end

  defp instructions(module, fun, arity) do
    {:beam_file, _, _, _, _, code} = :beam_disasm.file(object_code(module))

    for {:function, ^fun, ^arity, _entry, body} <- code do
      # Labels are numbered across the module: renumber them in order.
      labels = for({:label, l} <- body, do: l) |> Enum.with_index() |> Map.new()

      for instruction <- body,
          not match?({:line, _}, instruction),
          not match?({:label, _}, instruction),
          not match?({:func_info, _, _, _}, instruction),
          do: relabel(instruction, labels)
    end
  end

  defp relabel({:f, label}, labels), do: {:f, Map.get(labels, label, label)}

  defp relabel(term, labels) when is_tuple(term),
    do: term |> Tuple.to_list() |> relabel(labels) |> List.to_tuple()

  defp relabel(term, labels) when is_list(term), do: Enum.map(term, &relabel(&1, labels))
  defp relabel(term, _labels), do: term

  # The seeds are compiled in memory by load.exs, with no .beam to read: their
  # object code is had by compiling their text again under other names.
  @seed_files %{Reference.Target => "000_*.txt", Reference.WorkDisclosure => "002_*.txt"}
  defp object_code(module) when is_map_key(@seed_files, module) do
    [file] = Path.wildcard(Path.expand("../../shared/seeds/#{@seed_files[module]}", __DIR__))
    # As load.exs compiles them (the seed's Transparency is the stand-in's).
    text =
      File.read!(file)
      |> String.replace("defmodule OpenAgents.", "defmodule Bench.SeedCode.")
      |> String.replace(
        "alias OpenAgents.Transparency\n",
        "alias Reference.Transparency, as: Transparency\n"
      )

    [{_, binary} | _] = Code.compile_string(text, file)
    binary
  end

  defp object_code(module), do: :code.which(module)

  defp parity(sides) do
    case Keyword.take(sides, [:seed, :project]) do
      [seed: {s, _}, project: {p, _}] ->
        {a, b} = {s.once(), p.once()}
        if a == b, do: :ok, else: {:seed, a, :project, b}

      _ ->
        :ok
    end
  end

  defp summarize(c, timings, parity) do
    seed = timings[:seed] && Harness.median(timings[:seed])
    proj = Harness.median(timings[:project])
    floor = timings[:nif_floor] && Harness.median(timings[:nif_floor])

    {ratio, ratio_text, range} =
      if seed do
        per_round = Enum.zip_with(timings[:seed], timings[:project], &(&1 / &2))
        r = seed / proj

        {r, Harness.ratio(r),
         "#{Harness.ratio(Enum.min(per_round))}..#{Harness.ratio(Enum.max(per_round))}"}
      else
        {nil, "—", "—"}
      end

    verdict =
      cond do
        c.goal == nil -> "(no seed)"
        ratio >= c.goal -> "PASS"
        same_code?(c) -> "PASS (same code)"
        true -> "FAIL"
      end

    %{
      fun: c.fun,
      input: c.input,
      seed: seed,
      project: proj,
      floor: floor,
      ratio_text: ratio_text,
      range: range,
      goal_text: if(c.goal, do: ">= #{c.goal}", else: "—"),
      verdict: verdict,
      parity: parity
    }
  end
end

Bench.Run.main()
