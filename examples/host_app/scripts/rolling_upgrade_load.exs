# The load of scripts/rolling_upgrade.sh: the five readers' attempts page,
# spread round-robin over the cluster's nodes, while the coordinator
# upgrades them one at a time (A -> B) and brings them back (B -> A); then
# every answer is judged by the version that served it.
#
#   elixir -pa JASON_EBIN scripts/rolling_upgrade_load.exs --ports 4761,4762,4763 \
#     --dir DIR [--clients 10] [--kill-drill]
#
# With --kill-drill it is the load of the script's kill drill instead (see
# judge_kill/5): one node killed during its install and restarted, the
# rollout resumed; every request counted per node, a refusal while the node
# was down and a request cut by the kill counted apart from failures.
#
# Every response names its node and the decision digest of the library
# version that answered it (x-served-by-node, x-policy-digest: set inside
# HostApp.Upgrade's gate, so no install can come between the header and the
# body). It first reads each reader's page from every node (all on A): the
# same everywhere, and A's answers. DIR/digest_a and DIR/digest_b hold the
# two decision digests (the script computes B's from B's own library before
# the rollout). B's one policy change: an attempt's terminal_commit moves from
# ledger to glass, so B's answer to the member (a ledger reader who owns no
# attempt) is A's with every terminal_commit removed, and every other
# reader's is A's. It writes DIR/ready, loads until DIR/stop exists, then:
#
#   * every response is a 200 with both headers, and its digest is A's or B's;
#   * every answer equals the answer of the version that served it;
#   * no answer exceeds the tier the serving version allows (B never shows
#     the member a terminal_commit);
#   * the mixed windows (DIR/up_start..up_end, down_start..down_end, written
#     by the script around each rollout): from the first answer of the new
#     version to the last of the old one, its length and the answers of each
#     version inside it; and for each node's install (DIR/<phase>_<node>_start,
#     _end, written by the coordinator) the answers served meanwhile.
#
# DIR/responses.json: every response (time in ms since the epoch, node and
# digest from its headers, status, reader, port). DIR/summary.json: the
# figures. One line per check; exit 1 on any failure. What it shares with
# scripts/hot_upgrade_load.exs (the readers, one request, the clients' loop,
# the marks, the check lines) is scripts/lib/load_support.exs.
Code.require_file("lib/load_support.exs", __DIR__)

defmodule RollingUpgrade.Load do
  @moduledoc false

  import LoadSupport

  def main(argv) do
    {ports, dir, clients} = options(argv, {:ports, :string})
    {kill, _, _} = OptionParser.parse(argv, switches: [kill_drill: :boolean])
    ports = ports |> String.split(",") |> Enum.map(&String.to_integer/1)
    {baseline, digest_a} = baseline(ports)
    File.write!(Path.join(dir, "digest_a"), digest_a)
    turn = :atomics.new(1, [])

    # Round-robin over the nodes, each request to the next.
    request = fn reader ->
      port = Enum.at(ports, rem(:atomics.add_get(turn, 1, 1), length(ports)))
      port |> one(reader) |> Map.put(:port, port)
    end

    answers =
      for {reader, t0, t1, answer} <- run(dir, clients, request),
          do: Map.merge(answer, %{reader: reader, t0: t0, t1: t1})

    answers = Enum.sort_by(answers, & &1.t0)

    if kill[:kill_drill],
      do: judge_kill(answers, baseline, digest_a, ports, dir),
      else: judge(answers, baseline, digest_a, dir)
  end

  # Every reader's page from every node: one answer, one digest.
  defp baseline(ports) do
    pages =
      for reader <- readers(), port <- ports do
        case one(port, reader) do
          %{status: 200, body: body, digest: digest} -> {reader, body, digest}
          other -> fail("#{reader || "anonymous"}'s first page from #{port}: #{inspect(other)}")
        end
      end

    digests = pages |> Enum.map(&elem(&1, 2)) |> Enum.uniq()

    bodies =
      pages
      |> Enum.group_by(&elem(&1, 0), &elem(&1, 1))
      |> Map.new(fn {r, b} -> {r, Enum.uniq(b)} end)

    unless match?([digest] when is_binary(digest), digests) and
             Enum.all?(bodies, &match?({_, [_]}, &1)),
           do: fail("the nodes do not answer alike before the rollout: #{inspect(digests)}")

    unless hd(bodies["member"]) =~ ~s("terminal_commit"),
      do: fail("the member's page in A has no terminal_commit")

    {Map.new(bodies, fn {reader, [body]} -> {reader, body} end), hd(digests)}
  end

  defp one(port, reader) do
    case get(port, reader) do
      {:ok, status, headers, body} ->
        %{
          status: status,
          body: body,
          node: headers["x-served-by-node"],
          digest: headers["x-policy-digest"]
        }

      {:error, reason} ->
        %{status: :error, error: reason, body: inspect(reason), node: nil, digest: nil}
    end
  end

  # B's answer to each reader, from A's: the member loses every
  # terminal_commit; nobody else's page changes.
  defp expected_b(baseline) do
    Map.new(baseline, fn
      {"member", body} -> {"member", body |> Jason.decode!() |> strip("terminal_commit")}
      {reader, body} -> {reader, Jason.decode!(body)}
    end)
  end

  defp strip(map, key) when is_map(map),
    do: map |> Map.delete(key) |> Map.new(fn {k, v} -> {k, strip(v, key)} end)

  defp strip(list, key) when is_list(list), do: Enum.map(list, &strip(&1, key))
  defp strip(other, _key), do: other

  defp verdict(answer, baseline, b_answers, digest_a, digest_b) do
    cond do
      answer.status != 200 ->
        {:failed, "status #{inspect(answer.status)}: #{String.slice(answer.body, 0, 300)}"}

      is_nil(answer.node) ->
        {:failed, "no x-served-by-node header"}

      answer.digest == digest_a ->
        if answer.body == baseline[answer.reader],
          do: :a,
          else: {:failed, "served by A, not A's answer: #{String.slice(answer.body, 0, 300)}"}

      answer.digest == digest_b ->
        cond do
          answer.reader == "member" and answer.body =~ ~s("terminal_commit") ->
            {:failed, "served by B, a field above the member's tier in B (terminal_commit)"}

          Jason.decode!(answer.body) != b_answers[answer.reader] ->
            {:failed, "served by B, not B's answer: #{String.slice(answer.body, 0, 300)}"}

          true ->
            :b
        end

      true ->
        {:failed, "a digest neither A's nor B's: #{inspect(answer.digest)}"}
    end
  end

  defp judge(answers, baseline, digest_a, dir) do
    digest_b = dir |> Path.join("digest_b") |> File.read!() |> String.trim()
    b_answers = expected_b(baseline)

    judged =
      Enum.map(
        answers,
        &Map.put(&1, :verdict, verdict(&1, baseline, b_answers, digest_a, digest_b))
      )

    failed =
      for %{verdict: {:failed, why}} = a <- judged,
          do: "#{a.reader || "anonymous"} via #{a.port}: #{why}"

    write_responses(judged, dir)
    by = fn kind -> Enum.count(judged, &(&1.verdict == kind)) end

    results = [
      check(
        failed == [],
        "#{length(judged)} requests over #{length(Enum.uniq_by(judged, & &1.port))} nodes, " <>
          "#{length(failed)} failed (A answered #{by.(:a)}, B answered #{by.(:b)})" <>
          Enum.map_join(Enum.take(failed, 10), "", &"\n       failed: #{&1}")
      ),
      check(by.(:b) > 0, "B's answers seen: #{by.(:b)}"),
      window(judged, dir, "up", :a, :b),
      window(judged, dir, "down", :b, :a)
    ]

    installs =
      for file <- dir |> File.ls!() |> Enum.sort(),
          [_, phase, node] <- [Regex.run(~r/^(up|down)_(.+)_start$/, file)] do
        start = mark(dir, file)
        stop = mark(dir, "#{phase}_#{node}_end")
        during = Enum.filter(judged, &(&1.t1 >= start and &1.t0 <= stop))
        bad = Enum.count(during, &match?({:failed, _}, &1.verdict))
        own = Enum.count(during, &(&1.node == node))

        IO.puts(
          "     #{phase} #{node}: install #{ms(stop - start)} ms; meanwhile the cluster answered " <>
            "#{length(during)} requests (#{Enum.count(during, &(&1.verdict == :a))} A, " <>
            "#{Enum.count(during, &(&1.verdict == :b))} B; #{own} by this node, held at its gate " <>
            "or served before and after), #{bad} failed"
        )

        %{
          phase: phase,
          node: node,
          install_ms: div(stop - start, 1000),
          requests: length(during),
          requests_by_node: own,
          failed: bad
        }
      end

    File.write!(
      Path.join(dir, "summary.json"),
      Jason.encode!(%{
        requests: length(judged),
        failed: length(failed),
        by_version: %{a: by.(:a), b: by.(:b)},
        installs: installs,
        windows: for(phase <- ~w(up down), do: Process.get({:window, phase}))
      })
    )

    halt(results)
  end

  # The mixed window of one rollout: from the first answer of the version
  # going in to the last answer of the version going out, both inside the
  # rollout's marks.
  defp window(judged, dir, phase, from, to) do
    start = mark(dir, "#{phase}_start")
    stop = mark(dir, "#{phase}_end")
    inside = Enum.filter(judged, &(&1.t0 >= start and &1.t1 <= stop))

    first_new =
      inside |> Enum.filter(&(&1.verdict == to)) |> Enum.map(& &1.t0) |> Enum.min(fn -> nil end)

    last_old =
      inside |> Enum.filter(&(&1.verdict == from)) |> Enum.map(& &1.t1) |> Enum.max(fn -> nil end)

    if first_new && last_old && last_old > first_new do
      mixed = Enum.filter(inside, &(&1.t1 >= first_new and &1.t0 <= last_old))
      count = fn kind -> Enum.count(mixed, &(&1.verdict == kind)) end

      Process.put({:window, phase}, %{
        phase: phase,
        ms: div(last_old - first_new, 1000),
        requests: length(mixed),
        a: count.(:a),
        b: count.(:b)
      })

      check(
        true,
        "#{phase}: mixed window #{ms(last_old - first_new)} ms (rollout #{ms(stop - start)} ms): " <>
          "#{length(mixed)} requests, #{count.(:a)} answered by A, #{count.(:b)} by B, every one its version's answer"
      )
    else
      check(false, "#{phase}: no mixed window (both versions never served during the rollout)")
    end
  end

  # The kill drill's load (--kill-drill), over a cluster all on A: the
  # script kills one node (DIR/killed_port) during its install
  # (DIR/kill_at), restarts it (DIR/back_at: it answers again) and resumes
  # the rollout (DIR/resume_start .. resume_end). Each request is A's or B's
  # answer, or, to the killed node only: refused while it was down
  # (connection refused between the kill and its return), or cut by the kill
  # (a connection open when it died, or opened while the kernel tore the
  # dead VM's sockets down: reset or closed, made before @teardown_us after
  # the kill; the node's restart comes later). Anything else is a failure:
  # any error on the other nodes, a wrong answer anywhere, a refusal outside
  # the down window, a request that hangs (the client gives up after 30 s).
  @teardown_us 1_000_000
  @cut_errors [:closed, :econnreset, :enotconn, :epipe]

  defp judge_kill(answers, baseline, digest_a, ports, dir) do
    digest_b = dir |> Path.join("digest_b") |> File.read!() |> String.trim()
    b_answers = expected_b(baseline)
    killed = mark(dir, "killed_port")
    kill_at = mark(dir, "kill_at")
    back_at = mark(dir, "back_at")

    judged =
      Enum.map(answers, fn a ->
        verdict =
          case verdict(a, baseline, b_answers, digest_a, digest_b) do
            {:failed, _} = failed
            when a.port == killed and a.status == :error and kill_at != nil ->
              cond do
                a.error == :econnrefused and a.t1 >= kill_at and a.t0 <= (back_at || :infinity) ->
                  :refused

                a.error in @cut_errors and a.t1 >= kill_at and a.t0 <= kill_at + @teardown_us ->
                  :cut

                true ->
                  failed
              end

            other ->
              other
          end

        Map.put(a, :verdict, verdict)
      end)

    outcome = fn
      {:failed, _} -> :failed
      kind -> kind
    end

    windows = [
      drill: {mark(dir, "drill_start"), back_at},
      down: {kill_at, back_at},
      resume: {mark(dir, "resume_start"), mark(dir, "resume_end")},
      whole: {0, nil}
    ]

    by_port =
      Map.new(ports, fn port ->
        mine = Enum.filter(judged, &(&1.port == port))

        node =
          mine
          |> Enum.map(& &1.node)
          |> Enum.reject(&is_nil/1)
          |> Enum.frequencies()
          |> Enum.max_by(&elem(&1, 1), fn -> {nil, 0} end)
          |> elem(0)

        per_window =
          for {name, {start, stop}} <- windows, start != nil, into: %{} do
            inside = Enum.filter(mine, &(&1.t1 >= start and (stop == nil or &1.t0 <= stop)))
            counts = Enum.frequencies_by(inside, &outcome.(&1.verdict))

            slowest = fn kind ->
              inside
              |> Enum.filter(&(outcome.(&1.verdict) == kind))
              |> Enum.map(&div(&1.t1 - &1.t0, 1000))
              |> Enum.max(fn -> nil end)
            end

            {name,
             %{
               requests: length(inside),
               a: Map.get(counts, :a, 0),
               b: Map.get(counts, :b, 0),
               refused: Map.get(counts, :refused, 0),
               cut: Map.get(counts, :cut, 0),
               failed: Map.get(counts, :failed, 0),
               slowest_answer_ms: max(slowest.(:a) || 0, slowest.(:b) || 0),
               slowest_refusal_ms: slowest.(:refused)
             }}
          end

        {port, %{node: node, killed: port == killed, windows: per_window}}
      end)

    failed = for %{verdict: {:failed, why}} = a <- judged, do: {a, why}
    {on_killed, on_others} = Enum.split_with(failed, fn {a, _} -> a.port == killed end)
    killed_ones = Enum.filter(judged, &(&1.port == killed))
    refused = Enum.filter(killed_ones, &(&1.verdict == :refused))
    cut = Enum.filter(killed_ones, &(&1.verdict == :cut))
    other_ones = Enum.reject(judged, &(&1.port == killed))
    count = fn list, kind -> Enum.count(list, &(&1.verdict == kind)) end
    slowest_refusal = refused |> Enum.map(&(&1.t1 - &1.t0)) |> Enum.max(fn -> 0 end)
    cut_after_kill = cut |> Enum.map(&(&1.t1 - kill_at)) |> Enum.max(fn -> 0 end)
    slowest = judged |> Enum.map(&(&1.t1 - &1.t0)) |> Enum.max(fn -> 0 end)

    first_back =
      killed_ones
      |> Enum.filter(&(&1.verdict in [:a, :b] and kill_at != nil and &1.t0 > kill_at))
      |> Enum.map(& &1.t1)
      |> Enum.min(fn -> nil end)

    after_resume =
      case mark(dir, "resume_end") do
        nil -> []
        stop -> Enum.filter(judged, &(&1.t0 >= stop))
      end

    show = fn list ->
      Enum.map_join(Enum.take(list, 10), "", fn {a, why} ->
        "\n       failed: #{a.reader || "anonymous"} via #{a.port} at #{div(a.t0, 1000)}: #{why}"
      end)
    end

    others = Enum.reject(ports, &(&1 == killed))

    results = [
      check(
        kill_at != nil and killed in ports,
        "kill drill: node on port #{inspect(killed)} killed at #{inspect(kill_at && div(kill_at, 1000))} ms, " <>
          "answering again at #{inspect(back_at && div(back_at, 1000))} ms " <>
          "(#{if kill_at && back_at, do: ms(back_at - kill_at), else: "?"} ms down); #{length(judged)} requests in all"
      ),
      check(
        on_others == [],
        "the other two nodes (ports #{Enum.join(others, ", ")}): #{length(other_ones)} requests, " <>
          "#{count.(other_ones, :a)} answered by A, #{count.(other_ones, :b)} by B, " <>
          "#{length(on_others)} failed" <> show.(on_others)
      ),
      check(
        on_killed == [] and refused != [],
        "the killed node (port #{killed}): #{length(killed_ones)} requests, #{length(refused)} refused " <>
          "while it was down, #{length(cut)} cut by the kill (in flight), " <>
          "#{count.(killed_ones, :a)} answered by A, #{count.(killed_ones, :b)} by B, " <>
          "#{length(on_killed)} failed" <> show.(on_killed)
      ),
      check(
        slowest_refusal < 1_000_000 and cut_after_kill < 1_000_000,
        "it failed fast: the slowest refusal took #{ms(slowest_refusal)} ms, the last cut request " <>
          "ended #{ms(cut_after_kill)} ms after the kill; no request hung (the slowest took #{ms(slowest)} ms), " <>
          "its first answer after the kill at #{inspect(first_back && div(first_back, 1000))} ms"
      ),
      check(
        after_resume == [] or Enum.all?(after_resume, &(&1.verdict == :b)),
        "after the resumed rollout: #{length(after_resume)} requests, every one B's answer"
      )
    ]

    for {port, %{node: node, windows: w}} <- Enum.sort(by_port),
        {name, c} <- Enum.sort(w),
        name != :whole do
      IO.puts(
        "     #{name} #{port} (#{node}#{if port == killed, do: ", killed", else: ""}): " <>
          "#{c.requests} requests, #{c.a} A, #{c.b} B, #{c.refused} refused, #{c.cut} cut, #{c.failed} failed"
      )
    end

    File.write!(
      Path.join(dir, "summary.json"),
      Jason.encode!(%{
        requests: length(judged),
        killed_port: killed,
        kill_at_ms: kill_at && div(kill_at, 1000),
        back_at_ms: back_at && div(back_at, 1000),
        first_answer_after_kill_ms: first_back && div(first_back, 1000),
        refused: length(refused),
        cut: length(cut),
        failed_on_killed: length(on_killed),
        failed_on_others: length(on_others),
        slowest_refusal_ms: div(slowest_refusal, 1000),
        last_cut_after_kill_ms: div(cut_after_kill, 1000),
        slowest_ms: div(slowest, 1000),
        by_port: Map.new(by_port, fn {port, v} -> {Integer.to_string(port), v} end)
      })
    )

    File.write!(
      Path.join(dir, "responses.json"),
      Jason.encode!(
        for a <- judged do
          %{
            time_ms: div(a.t1, 1000),
            ms: div(a.t1 - a.t0, 1000),
            node: a.node,
            digest: a.digest,
            status: a.status,
            error: a[:error] && inspect(a.error),
            reader: a.reader || "anonymous",
            port: a.port,
            outcome: outcome.(a.verdict)
          }
        end
      )
    )

    halt(results)
  end

  defp write_responses(judged, dir) do
    File.write!(
      Path.join(dir, "responses.json"),
      Jason.encode!(
        for a <- judged do
          %{
            time_ms: div(a.t1, 1000),
            node: a.node,
            digest: a.digest,
            status: a.status,
            reader: a.reader || "anonymous",
            port: a.port,
            ok: not match?({:failed, _}, a.verdict)
          }
        end
      )
    )
  end
end

RollingUpgrade.Load.main(System.argv())
