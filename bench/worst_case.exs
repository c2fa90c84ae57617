# Worst cases: single calls of every NIF-backed function on the largest
# inputs, against the budget "no NIF call longer than 1 ms on any
# input", and what such calls do to the other processes of a scheduler.
#
#     MIX_ENV=bench mix run bench/worst_case.exs
#
# Inputs: a source map of 100_000 keys (plus the real columns), 10 MB
# binaries, a 10 MB binary tier, a viewer map of 100_000 keys, a
# 100_000-column list for classify/2.
#
# Each row runs in a fresh process that already holds its inputs; each of
# BENCH_CALLS (default 25) single calls is timed with a nanosecond monotonic
# clock; a full GC and a 1 ms sleep precede every call, so neither GC of the
# big inputs nor a previous call shares the call's time slice. A system monitor
# ({:long_schedule, 1}) reports any time slice of the row's process longer
# than 1 ms: that is the scheduler impact of a single call.
#
# BENCH_CALLS=25. The public functions are timed: what a host calls.
root = Path.expand("..", __DIR__)
Code.require_file(Path.join(root, "../shared/reference/load.exs"))
Code.require_file(Path.join(__DIR__, "support/harness.exs"))
Code.require_file(Path.join(__DIR__, "support/fixtures.exs"))

defmodule Bench.WorstCase do
  @moduledoc false
  alias Bench.{Fixtures, Harness}
  alias OpenAgents.Delegations.Target
  alias OpenAgents.Transparency.{Ladder, WorkDisclosure}

  @mb10 10_000_000
  @keys 100_000

  def inputs do
    big = :binary.copy("x", @mb10)
    # Starts with a real word, so no comparison can stop at the first byte.
    big_word = "running" <> :binary.copy("g", @mb10 - 7)
    filler = Map.new(1..@keys, &{&1, &1})
    record = Fixtures.attempt_record(1, Fixtures.link(1))
    big_source = Map.merge(filler, Fixtures.attempt_source(record))
    big_record = Map.merge(filler, record)
    big_viewer = Map.merge(filler, %{account_id: "acct-2", tier: :ledger})
    big_account_viewer = Map.merge(filler, %{account_id: "acct-2"})
    columns = for i <- 1..@keys, do: String.to_atom("bench_col_#{i}")
    columns_1k = Enum.take(columns, 1_000)
    columns_10k = Enum.take(columns, 10_000)
    known_columns = List.duplicate(:branch, @keys)

    %{
      big: big,
      big_word: big_word,
      # Equal to `big`, not the same term: comparing them reads every byte.
      big_copy: :binary.copy(big),
      big_source: big_source,
      big_record: big_record,
      big_viewer: big_viewer,
      big_account_viewer: big_account_viewer,
      record: record,
      source: Fixtures.attempt_source(record),
      big_tier_record:
        Map.put(big_record, :artifact_link, nil) |> Map.put(:transparency_tier, big),
      big_link_record:
        Map.put(big_record, :artifact_link, %{Fixtures.link(1) | account_id: big, tier: big}),
      machine: %OpenAgents.Machines.Machine{status: big_word, revoked_at: nil},
      columns: columns,
      columns_1k: columns_1k,
      columns_10k: columns_10k,
      known_columns: known_columns,
      user: %OpenAgents.Accounts.User{id: big, member_of: ["repo-1"]},
      big_repo: Map.merge(filler, %{id: big}),
      big_principal: Map.merge(filler, %{"type" => "user", "id" => big}),
      big_authority: filler,
      member: Fixtures.member_viewer()
    }
  end

  # {function, input, fun/1 taking the inputs map} or the same with
  # options ([calls: n] for rows too slow for the usual count).
  def cases do
    [
      {"(measurement floor: fn _ -> :ok end)", "—", fn _ -> :ok end},
      # ── Target, public ──
      {"Target.box_lifecycle/1", "10 MB binary", &Target.box_lifecycle(&1.big)},
      {"Target.box_lifecycle/1", "10 MB binary starting \"running\"",
       &Target.box_lifecycle(&1.big_word)},
      {"Target.run_lifecycle/1", "10 MB binary", &Target.run_lifecycle(&1.big)},
      {"Target.run_lifecycle/1", "10 MB binary starting \"running\"",
       &Target.run_lifecycle(&1.big_word)},
      {"Target.job_lifecycle/1", "10 MB binary", &Target.job_lifecycle(&1.big)},
      {"Target.job_lifecycle/1", "10 MB binary starting \"running\"",
       &Target.job_lifecycle(&1.big_word)},
      {"Target.computer_lifecycle/2", "status: 10 MB binary",
       &Target.computer_lifecycle(&1.machine, true)},
      {"Target.custody/1 (guard raises)", "10 MB binary",
       &rescued(fn -> Target.custody(&1.big) end)},
      {"Target.seam/3 (guard raises)", "10 MB kind, 10 MB lifecycle",
       &rescued(fn -> Target.seam(&1.big, &1.big, true) end)},
      {"Target.delegation_seam/1 (guard raises)", "10 MB binary",
       &rescued(fn -> Target.delegation_seam(&1.big) end)},
      # ── WorkDisclosure, public ──
      {"WorkDisclosure.project/3", "100k-key source, :glass",
       &WorkDisclosure.project(:attempt, &1.big_source, :glass)},
      {"WorkDisclosure.project/3", "100k-key source, 100k-key viewer",
       &WorkDisclosure.project(:attempt, &1.big_source, &1.big_viewer)},
      {"WorkDisclosure.project/3", "35-key source, 10 MB tier",
       &WorkDisclosure.project(:attempt, &1.source, &1.big)},
      {"WorkDisclosure.project/3", "100k-key source, 10 MB tier",
       &WorkDisclosure.project(:attempt, &1.big_source, &1.big)},
      {"WorkDisclosure.fields_at/2", "10 MB binary tier",
       &WorkDisclosure.fields_at(:attempt, &1.big)},
      {"WorkDisclosure.fields_at/2", "100k-key viewer map",
       &WorkDisclosure.fields_at(:work_job, &1.big_viewer)},
      {"WorkDisclosure.fields_at/2", "100k-key viewer, no :tier",
       &WorkDisclosure.fields_at(:work_job, &1.big_account_viewer)},
      {"WorkDisclosure.effective_tier/2", "100k-key record, live link",
       &WorkDisclosure.effective_tier(&1.big_record, &1.member)},
      {"WorkDisclosure.effective_tier/2", "100k-key record, 100k-key viewer",
       &WorkDisclosure.effective_tier(&1.big_record, &1.big_viewer)},
      {"WorkDisclosure.effective_tier/2", "100k-key record, 10 MB tier column",
       &WorkDisclosure.effective_tier(&1.big_tier_record, &1.member)},
      {"WorkDisclosure.effective_tier/2", "link with 10 MB owner and tier",
       &WorkDisclosure.effective_tier(&1.big_link_record, %{account_id: &1.big, tier: &1.big})},
      {"WorkDisclosure.tier_for/2", "10 MB binary field",
       &WorkDisclosure.tier_for(:attempt, &1.big)},
      {"WorkDisclosure.viewer/2", "100k-key repo, user with 10 MB id",
       &WorkDisclosure.viewer(&1.big_repo, &1.user)},
      {"WorkDisclosure.link_for_attempt/3", "100k-key repo/principal/authority, 10 MB ids",
       &WorkDisclosure.link_for_attempt(&1.big_repo, &1.big_principal, &1.big_authority)},
      {"WorkDisclosure.classify/2", "1_000 distinct unknown columns",
       &WorkDisclosure.classify(:attempt, &1.columns_1k)},
      {"WorkDisclosure.classify/2", "10_000 distinct unknown columns",
       &WorkDisclosure.classify(:attempt, &1.columns_10k)},
      {"WorkDisclosure.classify/2", "100_000 distinct unknown columns",
       &WorkDisclosure.classify(:attempt, &1.columns), calls: 2},
      {"WorkDisclosure.classify/2", "100_000 copies of a known column",
       &WorkDisclosure.classify(:attempt, &1.known_columns)},
      {"WorkDisclosure.never/1, source_columns/1, schedule/0, families/0", "(constant inputs)",
       fn _ ->
         {WorkDisclosure.never(:work_job), WorkDisclosure.source_columns(:work_job),
          WorkDisclosure.schedule(), WorkDisclosure.families()}
       end},
      {"WorkDisclosure.schedule_json/0", "()", fn _ -> WorkDisclosure.schedule_json() end},
      # ── Ladder, public ──
      {"Ladder.name/1", "10 MB binary", &Ladder.name(&1.big)},
      {"Ladder.rank/1", "10 MB binary", &Ladder.rank(&1.big)},
      {"Ladder.viewer_tier/1", "100k-key viewer map", &Ladder.viewer_tier(&1.big_viewer)},
      {"Ladder.clamp/2", "10 MB tier, 100k-key viewer", &Ladder.clamp(&1.big, &1.big_viewer)},
      {"Ladder.effective_tier/2", "link with 10 MB owner, 100k-key viewer",
       &Ladder.effective_tier(&1.big_link_record.artifact_link, &1.big_viewer)},
      {"Ladder.effective_tier/2", "link with 10 MB owner, viewer with an equal 10 MB id",
       &Ladder.effective_tier(&1.big_link_record.artifact_link, %{account_id: &1.big_copy})},
      {"Ladder.allows?/3", "link with 10 MB owner, viewer with an equal 10 MB id",
       &Ladder.allows?(&1.big_link_record.artifact_link, :full, %{account_id: &1.big_copy})},
      {"Ladder.allows?/3", "10 MB tier, 100k-key viewer",
       &Ladder.allows?(&1.big, :content, &1.big_viewer)}
    ]
  end

  defp rescued(fun) do
    fun.()
  rescue
    error -> {:raised, error.__struct__}
  end

  # ── single-call timing ────────────────────────────────────────────────

  def time_case({name, input, fun}, inputs, calls),
    do: time_case({name, input, fun, []}, inputs, calls)

  def time_case({_name, _input, fun, opts}, inputs, calls) do
    calls = Keyword.get(opts, :calls, calls)
    parent = self()
    ref = make_ref()

    {pid, mref} =
      spawn_monitor(fn ->
        # One untimed first call: the first use of a module loads its code
        # (interactive mode), which is not the NIF's time.
        fun.(inputs)

        times =
          for _ <- 1..calls do
            :erlang.garbage_collect()
            Process.sleep(1)
            w0 = :erlang.statistics(:scheduler_wall_time_all)
            t0 = :erlang.monotonic_time(:nanosecond)
            fun.(inputs)
            t1 = :erlang.monotonic_time(:nanosecond)
            w1 = :erlang.statistics(:scheduler_wall_time_all)
            Process.sleep(1)
            {t1 - t0, normal_share(w0, w1)}
          end

        send(parent, {ref, times})
      end)

    times =
      receive do
        {^ref, times} -> times
        {:DOWN, ^mref, _, _, reason} -> raise "worst case died: #{inspect(reason)}"
      end

    receive do
      {:DOWN, ^mref, _, _, _} -> :ok
    end

    longs = collect_long_schedules(pid, [])
    {times, longs}
  end

  # The share of the call's time that a normal scheduler was busy: the
  # busiest normal scheduler's active time over its wall time between the two
  # samples. ~0 for a call that ran on a dirty scheduler (its process waits,
  # its normal scheduler sleeps), ~1 for a call that ran on a normal one.
  defp normal_share(w0, w1) do
    normal = :erlang.system_info(:schedulers)

    Enum.zip_with(Enum.sort(w0), Enum.sort(w1), fn {id, a0, t0}, {id, a1, t1} ->
      if id <= normal and t1 > t0, do: (a1 - a0) / (t1 - t0), else: 0.0
    end)
    |> Enum.max()
  end

  defp collect_long_schedules(pid, acc) do
    receive do
      {:monitor, ^pid, :long_schedule, info} -> collect_long_schedules(pid, [info | acc])
    after
      0 -> acc
    end
  end

  # ── main ───────────────────────────────────────────────────────────────

  def main do
    calls = Harness.env_int("BENCH_CALLS", 25)

    IO.puts("""
    openagents_policy worst cases: #{calls} single calls per row, max and median
    OTP #{System.otp_release()}, schedulers #{:erlang.system_info(:schedulers_online)}; load #{Harness.loadavg()}
    #{Harness.revision()}
    """)

    single_calls(inputs(), calls)
    IO.puts("load at end: #{Harness.loadavg()}")
  end

  defp single_calls(inputs, calls) do
    :erlang.system_monitor(self(), [{:long_schedule, 1}])
    :erlang.system_flag(:scheduler_wall_time, true)

    rows =
      for c <- cases() do
        {name, input} = {elem(c, 0), elem(c, 1)}
        {times, longs} = time_case(c, inputs, calls)
        ns = Enum.map(times, &elem(&1, 0))
        # Time on a normal scheduler: the call's time, by the share of it the
        # busiest normal scheduler was active.
        normal_ns = Enum.map(times, fn {ns, share} -> ns * min(share, 1.0) end)
        max_long = longs |> Enum.map(&Keyword.get(&1, :timeout, 0)) |> Enum.max(fn -> 0 end)
        IO.write(:stderr, "  #{name} #{input}: #{us1(Enum.max(ns))} µs\n")

        %{
          name: name,
          input: input,
          max_ns: Enum.max(ns),
          median_ns: Harness.median(ns),
          median_normal_ns: Harness.median(normal_ns),
          normal_share: Harness.median(Enum.map(times, &elem(&1, 1))),
          longs: length(longs),
          max_long: max_long,
          long_where: longs |> Enum.max_by(&Keyword.get(&1, :timeout, 0), fn -> nil end)
        }
      end

    :erlang.system_monitor(:undefined)

    table =
      for r <- rows do
        [
          r.name,
          r.input,
          us1(r.max_ns),
          us1(r.median_ns),
          "#{round(min(r.normal_share, 1.0) * 100)}%",
          us1(r.median_normal_ns),
          if(r.longs == 0, do: "0", else: "#{r.longs} (max #{r.max_long} ms)"),
          if(r.median_normal_ns > 1_000_000, do: "OVER 1 ms", else: "ok")
        ]
      end

    Harness.table(
      [
        "function",
        "input",
        "max µs",
        "median µs",
        "normal busy",
        "median µs normal",
        "slices > 1 ms",
        "budget"
      ],
      table,
      [2, 3, 4, 5]
    )

    IO.puts("""

    "normal busy": the median share of a call's time during which the busiest
    normal scheduler was active (scheduler_wall_time); a call that moved to a
    dirty scheduler leaves it idle. "µs normal": a call's time by that share,
    the time it held a normal scheduler. The budget is judged on the median of
    it over the calls: a call that is long on a normal scheduler is long every
    time, while one late call is the OS descheduling the VM's thread on this
    shared machine, which is also what most long_schedule reports here are
    (scheduled in from the 1 ms sleep before the call, with nothing run).
    "slices > 1 ms": long_schedule reports for the row's process (each call
    sits alone in its time slice). The floor row is the cost of the timing.
    """)

    for r <- rows, r.long_where do
      IO.puts("long_schedule in #{r.name} [#{r.input}]: #{inspect(r.long_where)}")
    end

    over = Enum.filter(rows, &(&1.median_normal_ns > 1_000_000))

    IO.puts(
      "\n" <>
        if(over == [],
          do: "no call over 1 ms",
          else:
            "over 1 ms: " <>
              Enum.map_join(
                over,
                "; ",
                &"#{&1.name} [#{&1.input}] #{us1(&1.median_normal_ns)} µs on a normal scheduler (median)"
              )
        )
    )
  end

  defp us1(ns), do: :erlang.float_to_binary(ns / 1000, decimals: 1)
end

Bench.WorstCase.main()
