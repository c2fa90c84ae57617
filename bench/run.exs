# The library against the seeds it replaces, call for call: every public
# function of Delegations.Target and Transparency.WorkDisclosure on the
# inputs a host passes, and the host's page (200 attempts: `effective_tier/2`,
# then `project/3` of the attempt and of its work job, for four readers).
#
#     make bench        # MIX_ENV=bench mix run bench/run.exs
#
# The seeds come from ../shared/reference/load.exs (compiled into this VM as
# Reference.Target and Reference.WorkDisclosure, with the host stand-ins both
# sides share). Each row's calls are compiled into one function per side,
# with the inputs as literals, made 100 times over in a loop, so both sides
# pay the same (small) loop and call overhead and a sample lasts long enough
# for the timer; the table gives ns per pass of the row's calls. Before
# timing, both sides' answers are compared; a difference prints MISMATCH.
#
# Environment: BENCH_TIME (seconds per side, default 0.4), BENCH_ONLY (a
# regex on "function input"). Prints median ns per row for each side and
# `seed ÷ ours` (above 1: the library is faster). Reports; never fails.
root = Path.expand("..", __DIR__)
Code.require_file(Path.join(root, "../shared/reference/load.exs"))
Code.require_file(Path.join(__DIR__, "support/harness.exs"))
Code.require_file(Path.join(__DIR__, "support/fixtures.exs"))

defmodule Bench.Run do
  @moduledoc false
  alias Bench.{Fixtures, Harness}

  @passes 100

  @sides %{
    target: {Reference.Target, OpenAgents.Delegations.Target},
    disclosure: {Reference.WorkDisclosure, OpenAgents.Transparency.WorkDisclosure}
  }

  @doc "The rows: `{module, function, input label, argument lists}`."
  def rows do
    box =
      ~w(init provisioning provisioned cloning ready idle running archiving archived error queued bogus)

    run = ~w(admitted dispatched running completed failed cancelled timed_out lost bogus)
    job = ~w(queued running completed failed interrupted budget_exhausted cancelled stopping)
    lifecycles = ~w(cold queued starting active stopping failed destroyed)
    families = ~w(attempt work_job evidence trace)a
    member = Fixtures.member_viewer()
    record = Fixtures.attempt_record(1, Fixtures.link(1))
    unlinked = Map.put(Fixtures.attempt_record(2, nil), :artifact_link, %Bench.NotLoaded{})
    revoked = Fixtures.attempt_record(3, Fixtures.link(3, revoked_at: Fixtures.ts(9)))
    source = Fixtures.attempt_source(record)
    words = &Enum.map(&1, fn word -> [word] end)

    [
      {:target, :lifecycles, "()", [[]]},
      {:target, :kinds, "()", [[]]},
      {:target, :custody, "box, computer", [["box"], ["computer"]]},
      {:target, :runtime_class, "box, computer", [["box"], ["computer"]]},
      {:target, :box_lifecycle, "12 box states", words.(box)},
      {:target, :run_lifecycle, "9 run states", words.(run)},
      {:target, :job_lifecycle, "8 job statuses", words.(job)},
      {:target, :computer_lifecycle, "4 machines x online?",
       for(m <- Fixtures.machines(), online <- [true, false], do: [m, online])},
      {:target, :seam, "2 kinds x 7 lifecycles x authorized?",
       for(k <- ~w(box computer), l <- lifecycles, a <- [true, false], do: [k, l, a])},
      {:target, :delegation_seam, "6 delegation lifecycles",
       words.(~w(queued starting active succeeded failed cancelled))},
      {:disclosure, :schedule, "()", [[]]},
      {:disclosure, :never, "4 families", words.(families)},
      {:disclosure, :source_columns, "4 families", words.(families)},
      {:disclosure, :tier_for, "4 fields, 1 never",
       [
         [:attempt, :branch],
         [:work_job, :report],
         [:work_job, :goal],
         [:trace, :digest],
         [:evidence, :environment]
       ]},
      {:disclosure, :fields_at, "4 families x 3 tiers",
       for(f <- families, t <- [:pulse, :ledger, :glass], do: [f, t])},
      {:disclosure, :fields_at, "\"ledger\", nil, :bogus, viewer map",
       [[:attempt, "ledger"], [:work_job, nil], [:evidence, :bogus], [:work_job, member]]},
      {:disclosure, :viewer, "operator, member, stranger, nil",
       Enum.map(Fixtures.users(), &[Fixtures.repository(), &1])},
      {:disclosure, :effective_tier, "live link: member, owner, operator",
       for(v <- [member, Fixtures.owner_viewer(), Fixtures.operator_viewer()], do: [record, v])},
      {:disclosure, :effective_tier, "revoked link, member", [[revoked, member]]},
      {:disclosure, :effective_tier, "no link (NotLoaded), member", [[unlinked, member]]},
      {:disclosure, :link_for_attempt, "user principal (mints)",
       [[Fixtures.repository(), %{"type" => "user", "id" => "acct-1"}, %{"cwd" => "/src"}]]},
      {:disclosure, :link_for_attempt, "agent principal (:none)",
       [[Fixtures.repository(), %{"type" => "agent", "id" => "agent-7"}, %{}]]},
      {:disclosure, :project, "attempt source (35 keys) x 4 tiers",
       for(t <- [:dark, :pulse, :ledger, :glass], do: [:attempt, source, t])},
      {:disclosure, :project, "work_job, evidence, trace sources, :ledger",
       [
         [:work_job, Fixtures.work_job_source(1), :ledger],
         [:evidence, Fixtures.evidence_source(1), :ledger],
         [:trace, Fixtures.trace_source(1), :ledger]
       ]}
    ]
  end

  # One module per side and row: `run/0` makes the row's calls, unrolled,
  # @passes times over, so that one sample lasts microseconds, well above
  # the timer's resolution (a row's calls alone take tens of nanoseconds).
  # The table divides by @passes: ns per pass.
  defp compile(name, module, fun, arglists) do
    calls =
      for args <- arglists,
          do: quote(do: _ = unquote(module).unquote(fun)(unquote_splicing(Macro.escape(args))))

    body =
      quote do
        def run, do: loop(unquote(@passes))
        defp loop(0), do: :ok

        defp loop(n) do
          unquote_splicing(calls)
          loop(n - 1)
        end
      end

    Module.create(name, body, Macro.Env.location(__ENV__))
    Function.capture(name, :run, 0)
  end

  # The host's page: per attempt, the tier its reader reads it at, then the
  # attempt and its work job projected at that tier.
  defp compile_page(name, module, viewer) do
    attempts = Macro.escape(Fixtures.page(200))

    body =
      quote do
        def run, do: page(unquote(attempts))
        defp page([]), do: :ok

        defp page([{record, source, job} | rest]) do
          tier = unquote(module).effective_tier(record, unquote(Macro.escape(viewer)))
          _ = unquote(module).project(:attempt, source, tier)
          _ = unquote(module).project(:work_job, job, tier)
          page(rest)
        end
      end

    Module.create(name, body, Macro.Env.location(__ENV__))
    Function.capture(name, :run, 0)
  end

  defp answers(module, fun, arglists),
    do: for(args <- arglists, do: outcome(fn -> apply(module, fun, args) end))

  defp outcome(fun) do
    fun.()
  rescue
    error -> {:raise, error.__struct__}
  end

  defp medians(jobs), do: Map.new(Harness.benchee(jobs), fn {name, s} -> {name, s.median} end)

  def main do
    only = System.get_env("BENCH_ONLY")
    keep? = fn label -> only == nil or Regex.match?(~r/#{only}/, label) end

    IO.puts("""
    openagents_policy bench: seed (Reference.*) vs ours (OpenAgents.*), Benchee medians
    OTP #{System.otp_release()}, Elixir #{System.version()}, schedulers #{:erlang.system_info(:schedulers_online)}, MIX_ENV=#{Mix.env()}
    #{Harness.revision()}; load average at start: #{Harness.loadavg()}
    """)

    rows =
      for {{which, fun, input, arglists}, i} <- Enum.with_index(rows()),
          label = "#{fun}/#{length(hd(arglists))} #{input}",
          keep?.(label) do
        {seed, ours} = @sides[which]
        same? = answers(seed, fun, arglists) == answers(ours, fun, arglists)

        jobs = %{
          "seed" => compile(:"Elixir.Bench.Row#{i}.Seed", seed, fun, arglists),
          "ours" => compile(:"Elixir.Bench.Row#{i}.Ours", ours, fun, arglists)
        }

        {label, same?, Map.new(medians(jobs), fn {side, ns} -> {side, ns / @passes} end)}
      end

    pages =
      for {reader, viewer} <- [
            member: Fixtures.member_viewer(),
            owner: Fixtures.owner_viewer(),
            anonymous: Fixtures.anonymous_viewer(),
            operator: Fixtures.operator_viewer()
          ],
          label = "page of 200 attempts, #{reader}",
          keep?.(label) do
        {seed, ours} = @sides.disclosure

        jobs = %{
          "seed" => compile_page(:"Elixir.Bench.Page.#{reader}.Seed", seed, viewer),
          "ours" => compile_page(:"Elixir.Bench.Page.#{reader}.Ours", ours, viewer)
        }

        {label, true, medians(jobs)}
      end

    Harness.table(
      ["row", "seed ns", "ours ns", "seed ÷ ours"],
      for {label, same?, %{"seed" => seed, "ours" => ours}} <- rows ++ pages do
        [
          label,
          Harness.ns(seed),
          Harness.ns(ours),
          Harness.ratio(seed / max(ours, 0.1)) <> if(same?, do: "", else: "  MISMATCH")
        ]
      end,
      [1, 2, 3]
    )

    IO.puts("\nload average at end: #{Harness.loadavg()}")
  end
end

Bench.Run.main()
