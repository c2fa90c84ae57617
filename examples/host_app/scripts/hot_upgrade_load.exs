# The load of scripts/hot_upgrade.sh: the five readers' attempts page, over
# and over, while the running release is upgraded and downgraded in place;
# then every answer is judged against the moments the script recorded.
#
#   elixir scripts/hot_upgrade_load.exs --port 4795 --dir DIR [--clients 10]
#
# It first reads each reader's page once: A's answers (release A is running).
# The member's page of A must carry `terminal_commit` (the ledger field
# release B's core moves to glass), so the member's answers tell A from B;
# the other four readers' pages do not change between A and B, and must stay
# byte for byte what they were. It writes DIR/ready, then loads until
# DIR/stop exists. Each answer is kept with its start and end (epoch
# microseconds, the clock of `date +%s%6N`).
#
# DIR/up_start, up_end, down_start, down_end (written by the script around
# `bin/host_app install`) split time: an answer that ended before up_start
# must be A's; one that started after up_end and ended before down_start,
# B's; one that started after down_end, A's again; one that overlapped an
# install may be either, but nothing may fail. One line per check; exit 1 on
# any failure. What it shares with scripts/rolling_upgrade_load.exs (the
# readers, one request, the clients' loop, the marks, the check lines) is
# scripts/lib/load_support.exs.
Code.require_file("lib/load_support.exs", __DIR__)

defmodule HotUpgrade.Load do
  @moduledoc false

  import LoadSupport

  @marker ~s("terminal_commit")

  def main(argv) do
    {port, dir, clients} = options(argv, {:port, :integer})
    baseline = Map.new(readers(), fn reader -> {reader, fetch!(port, reader)} end)

    unless baseline["member"] =~ @marker,
      do: fail("the member's page in release A has no #{@marker}: #{baseline["member"]}")

    judge(run(dir, clients, &one(port, &1, baseline)), dir)
  end

  defp fetch!(port, reader) do
    case get(port, reader) do
      {:ok, 200, _, body} -> body
      other -> fail("#{reader || "anonymous"}'s first page: #{inspect(other)}")
    end
  end

  defp one(port, reader, baseline) do
    case get(port, reader) do
      {:ok, 200, _, body} ->
        classify(reader, body, baseline)

      {:ok, status, headers, body} ->
        {:failed, "status #{status} (#{request_id(headers)}): #{String.slice(body, 0, 500)}"}

      {:error, reason} ->
        {:failed, inspect(reason)}
    end
  end

  # The id Plug.RequestId gave the request: the daemon's log line of it names it.
  defp request_id(headers), do: "request_id=#{Map.get(headers, "x-request-id", "none")}"

  defp classify(reader, body, baseline) do
    cond do
      body == baseline[reader] and reader == "member" -> :a
      body == baseline[reader] -> :same
      reader == "member" and not (body =~ @marker) -> {:b, body}
      true -> {:failed, "an answer neither A's nor B's: #{String.slice(body, 0, 300)}"}
    end
  end

  defp judge(answers, dir) do
    [up_start, up_end, down_start, down_end] =
      Enum.map(~w(up_start up_end down_start down_end), &(mark(dir, &1) || fail("no DIR/#{&1}")))

    phase = fn {_, t0, t1, _} ->
      cond do
        t1 < up_start -> :before
        t0 > up_end and t1 < down_start -> :upgraded
        t0 > down_end -> :downgraded
        t0 <= up_end and t1 >= up_start -> :upgrading
        true -> :downgrading
      end
    end

    by_phase = Enum.group_by(answers, phase)

    failed =
      for {reader, t0, t1, {:failed, why}} <- Enum.sort_by(answers, &elem(&1, 1)),
          do:
            "#{reader || "anonymous"}, sent #{ms(t0 - up_start)} ms after install started, " <>
              "answered #{ms(t1 - up_start)} ms after (install took #{ms(up_end - up_start)} ms; " <>
              "the downgrade's started #{ms(down_start - up_start)} ms after): #{why}"

    # Every failure, in full, for the script to keep with the daemon's log.
    File.write!(Path.join(dir, "failed"), Enum.map(failed, &[&1, ?\n]))

    b_bodies = for {_, _, _, {:b, body}} <- answers, uniq: true, do: body
    kind = fn {_, _, _, outcome} -> if match?({:b, _}, outcome), do: :b, else: outcome end
    count = fn phase, kinds -> Enum.count(by_phase[phase] || [], &(kind.(&1) in kinds)) end
    total = fn phase -> length(by_phase[phase] || []) end

    results = [
      check(
        failed == [],
        "zero failed or 5xx requests: #{length(answers)} requests, #{length(failed)} failed" <>
          if(failed == [],
            do: "",
            else: Enum.map_join(Enum.take(failed, 10), "", &"\n       failed: #{&1}")
          )
      ),
      check(
        total.(:before) > 0 and count.(:before, [:a, :same]) == total.(:before),
        "before install: #{total.(:before)} requests, every one A's answer"
      ),
      check(
        count.(:upgrading, [:a, :b, :same]) == total.(:upgrading),
        "during install: #{total.(:upgrading)} requests served (#{count.(:upgrading, [:a])} A, " <>
          "#{count.(:upgrading, [:b])} B, #{count.(:upgrading, [:same])} unchanged readers), none failed"
      ),
      check(
        count.(:upgraded, [:b]) > 0 and count.(:upgraded, [:b, :same]) == total.(:upgraded),
        "after install: #{total.(:upgraded)} requests, every one B's answer " <>
          "(#{count.(:upgraded, [:b])} member pages without terminal_commit)"
      ),
      check(length(b_bodies) == 1, "B's member page is one and the same answer every time"),
      first_b(answers, up_start, up_end),
      check(
        count.(:downgrading, [:a, :b, :same]) == total.(:downgrading),
        "during downgrade: #{total.(:downgrading)} requests served, none failed"
      ),
      check(
        count.(:downgraded, [:a]) > 0 and count.(:downgraded, [:a, :same]) == total.(:downgraded),
        "after downgrade: #{total.(:downgraded)} requests, every one A's answer again"
      )
    ]

    halt(results)
  end

  defp first_b(answers, up_start, up_end) do
    case for({_, _, t1, {:b, _}} <- answers, do: t1) do
      [] ->
        check(false, "no B answer at all")

      ends ->
        first = Enum.min(ends)

        check(
          true,
          "first B answer #{ms(first - up_start)} ms after `install` started " <>
            "(the install command took #{ms(up_end - up_start)} ms)"
        )
    end
  end
end

HotUpgrade.Load.main(System.argv())
