# The decision diff as a caller meets it: `OpenAgentsPolicy.Decisions.diff/3`
# through the NIF (a dirty CPU scheduler, term encoding included), on two
# whole documents. The same two pairs as the core's own bench
# (native/openagents_policy/examples/diff_bench.rs), built from this build's live
# document, nothing written by hand:
#
#   * the document against itself (no change);
#   * against a copy with every `ladder.allows` answer flipped.
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
      live |> Jason.decode!() |> update_in(["ladder", "allows"], &negate/1) |> Jason.encode!()

    IO.puts("""
    openagents_policy bench: Decisions.diff/3 through the NIF, Benchee
    OTP #{System.otp_release()}, Elixir #{System.version()}, schedulers #{:erlang.system_info(:schedulers_online)}, MIX_ENV=#{Mix.env()}
    #{Harness.revision()}; load average at start: #{Harness.loadavg()}
    decision document: #{byte_size(live)} bytes of JSON
    """)

    rows =
      for {label, new} <- [{"the same document", live}, {"every ladder.allows flipped", flipped}],
          {:ok, changes} = Decisions.diff(live, new),
          format <- [:changes, :markdown, :json] do
        %{"diff" => stats} =
          Harness.benchee(%{"diff" => fn -> Decisions.diff(live, new, format: format) end})

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

    IO.puts("\nload average at end: #{Harness.loadavg()}")
  end

  defp negate(answer) when is_boolean(answer), do: not answer
  defp negate(list) when is_list(list), do: Enum.map(list, &negate/1)
  defp negate(other), do: other
end

Bench.DecisionsDiff.main()
