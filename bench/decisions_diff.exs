# The decision diff as a caller meets it: `OpenAgentsPolicy.Decisions.diff/3`
# through the NIF (a dirty CPU scheduler, term encoding included), on two
# whole documents. The same three pairs as the core's own bench
# (native/openagents_policy/examples/diff_bench.rs), built from this build's live
# document or from the diff's limits, nothing written by hand:
#
#   * the document against itself (no change);
#   * against a copy with every `ladder.allows` answer flipped;
#   * two documents at the limits (4 MiB, long words, every answer different).
#
# Then what a caller that gives up costs the node: two diffs at the limits
# started and their callers killed after 300 ms (a NIF cannot be stopped, so
# each runs to its end on a dirty CPU scheduler), and how long
# `Native.decision_digest()`, another dirty NIF (its answer cached), waits meanwhile.
#
#     make bench-diff    # the core's bench, then MIX_ENV=bench mix run bench/decisions_diff.exs
#
# Each pair is timed by Benchee (BENCH_TIME seconds, default 0.4; min, median
# and 99th percentile printed), for each format the function answers with.
# The seeds have no diff, so there is no seed column. Reports; never fails.
Code.require_file(Path.join(__DIR__, "support/harness.exs"))

defmodule Bench.DecisionsDiff do
  @moduledoc false
  alias Bench.Harness
  alias OpenAgentsPolicy.Decisions

  def main do
    live = OpenAgentsPolicy.decisions_json()

    flipped =
      live
      |> Jason.decode!()
      |> Map.update!("rows", fn rows ->
        for [table, input, answer] <- rows,
            do: [table, input, if(table == "ladder.allows", do: not answer, else: answer)]
      end)
      |> Jason.encode!()

    {low, high} = {at_the_limits("dark"), at_the_limits("glass")}

    IO.puts("""
    openagents_policy bench: Decisions.diff/3 through the NIF, Benchee
    OTP #{System.otp_release()}, Elixir #{System.version()}, schedulers #{:erlang.system_info(:schedulers_online)}, MIX_ENV=#{Mix.env()}
    #{Harness.revision()}; load average at start: #{Harness.loadavg()}
    decision document: #{byte_size(live)} bytes of JSON
    """)

    rows =
      for {label, old, new} <- [
            {"the same document", live, live},
            {"every ladder.allows flipped", live, flipped},
            {"at the limits", low, high}
          ],
          {:ok, changes} = Decisions.diff(old, new),
          format <- [:changes, :markdown, :json] do
        %{"diff" => stats} =
          Harness.benchee(%{"diff" => fn -> Decisions.diff(old, new, format: format) end})

        [
          label,
          inspect(format),
          Integer.to_string(length(changes)),
          Harness.ns(stats.minimum / 1000),
          Harness.ns(stats.median / 1000),
          Harness.ns((stats.percentiles[99] || stats.maximum) / 1000)
        ]
      end

    right_aligned = [2, 3, 4, 5]

    Harness.table(
      ["pair", "format", "changes", "min µs", "median µs", "p99 µs"],
      rows,
      right_aligned
    )

    given_up(low, high)
    IO.puts("\nload average at end: #{Harness.loadavg()}")
  end

  # Two diffs at the limits whose callers are killed after 300 ms, then a
  # short dirty NIF timed while they finish.
  defp given_up(low, high) do
    callers = for _ <- 1..2, do: spawn(fn -> Decisions.diff(low, high, format: :markdown) end)
    Process.sleep(300)
    Enum.each(callers, &Process.exit(&1, :kill))
    {us, _} = :timer.tc(fn -> OpenAgentsPolicy.Native.decision_digest() end)

    IO.puts(
      "\ntwo diffs at the limits, their callers killed after 300 ms: Native.decision_digest() took #{Harness.ns(us)} µs"
    )
  end

  # As many `ladder.effective` rows of 100-byte words as the limits allow,
  # each answered `tier`: the most one diff may read and make.
  defp at_the_limits(tier) do
    word = String.duplicate("w", 100)
    row = fn n -> ["ladder.effective", %{"subject" => "#{word}#{n}", "viewer" => word}, tier] end
    size = byte_size(Jason.encode!(row.(24_576))) + 1
    rows = min(div(4 * 1024 * 1024 - 64, size), 24_576)
    Jason.encode!(%{"format" => 2, "rows" => Enum.map(0..(rows - 1), row)})
  end
end

Bench.DecisionsDiff.main()
