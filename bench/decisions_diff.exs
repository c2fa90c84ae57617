# The decision diff as a caller meets it: `OpenAgentsPolicy.Decisions.diff/3`
# through the NIF (a dirty CPU scheduler, term encoding included), on two
# whole documents. The same four pairs as the Rust bench
# (native/openagents_policy_decisions/examples/diff_bench.rs), built from this
# build's live document or from the diff's limits, nothing written by hand:
#
#   * the document against itself (no change);
#   * against a copy with every `ladder.effective` answer another tier;
#   * two documents at the read limits (1 MiB, long words), alike;
#   * the same, every answer different: refused by the output limit.
#
# Then what a caller that gives up costs the node: two diffs at the read
# limits started and their callers killed after 300 ms (a NIF cannot be stopped, so
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

    moved =
      live
      |> Jason.decode!()
      |> Map.update!("rows", fn rows ->
        for [table, input, answer] <- rows do
          cond do
            table != "ladder.effective" -> [table, input, answer]
            answer == "dark" -> [table, input, "glass"]
            true -> [table, input, "dark"]
          end
        end
      end)
      |> Jason.encode!()

    {low, high} = {at_the_limits(live, 0), at_the_limits(live, 1)}

    IO.puts("""
    openagents_policy bench: Decisions.diff/3 through the NIF, Benchee
    OTP #{System.otp_release()}, Elixir #{System.version()}, schedulers #{:erlang.system_info(:schedulers_online)}, MIX_ENV=#{Mix.env()}
    #{Harness.revision()}; load average at start: #{Harness.loadavg()}
    decision document: #{byte_size(live)} bytes of JSON
    """)

    rows =
      for {label, old, new} <- [
            {"the same document", live, live},
            {"every ladder.effective moved", live, moved},
            {"at the read limits, alike", low, low},
            {"at the read limits, all moved", low, high}
          ],
          said =
            (case Decisions.diff(old, new) do
               {:ok, changes} -> Integer.to_string(length(changes))
               {:error, {:too_large, nil, _}} -> "refused"
             end),
          format <- [:changes, :markdown, :json] do
        %{"diff" => stats} =
          Harness.benchee(%{"diff" => fn -> Decisions.diff(old, new, format: format) end})

        [
          label,
          inspect(format),
          said,
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

  # Two diffs at the read limits whose callers are killed after 300 ms, then
  # a short dirty NIF timed while they finish.
  defp given_up(low, high) do
    callers = for _ <- 1..2, do: spawn(fn -> Decisions.diff(low, high, format: :markdown) end)
    Process.sleep(300)
    Enum.each(callers, &Process.exit(&1, :kill))
    {us, _} = :timer.tc(fn -> OpenAgentsPolicy.Native.decision_digest() end)

    IO.puts(
      "\ntwo diffs at the read limits, their callers killed after 300 ms: Native.decision_digest() took #{Harness.ns(us)} µs"
    )
  end

  # The document and as many `ladder.ranks` rows of 100-byte tier words as
  # the read limits allow (1 MiB, 8,192 rows), each ranked `rank`.
  defp at_the_limits(live, rank) do
    %{"rows" => rows} = document = Jason.decode!(live)
    word = String.duplicate("w", 100)
    row = fn n -> ["ladder.ranks", %{"tier" => "#{word}#{n}"}, rank] end
    size = byte_size(Jason.encode!(row.(8_192))) + 1
    more = min(div(1024 * 1024 - 64 - byte_size(live), size), 8_192 - length(rows))
    Jason.encode!(%{document | "rows" => rows ++ Enum.map(1..more, row)})
  end
end

Bench.DecisionsDiff.main()
