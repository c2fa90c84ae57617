# The load of rolling_replace.sh: the five readers' attempts page,
# round-robin over the nodes in rotation (as a load balancer spreads it)
# while the script replaces them; then every answer judged by the decisions
# that served it, and the record written.
#
#   elixir -pa JASON_EBIN examples/drills/rolling_replace_load.exs --ports P1,P2,P3 --dir DIR [--clients N]
#
# Through DIR: reads every reader's page from every node (alike: A's pages and
# digest, DIR/digest_a), then DIR/ready. DIR/rotation ("GEN PORT..."): the
# ports in rotation; once none is in flight to a port left out, DIR/ack_GEN.
# After DIR/stop, an answer passes as a 200 naming its node with A's digest
# and page, or B's digest (DIR/digest_b) and page: A's without the member's
# terminal_commit (a ledger reader). Its phase is its start: before
# DIR/window_start, during, after DIR/window_end. Checks: none failed; only A
# before, both during, only B after. Writes DIR/record.json (with DIR/nodes,
# DIR/gate.json) and DIR/line; exits 1 when a check fails.
Code.require_file("lib/load_support.exs", __DIR__)

defmodule RollingReplace.Load do
  @moduledoc false
  import LoadSupport

  def main(argv) do
    {ports, dir, clients} = options(argv, {:ports, :string})
    ports = ports |> String.split(",") |> Enum.map(&String.to_integer/1)
    {pages_a, digest_a} = baseline(ports)
    File.write!(Path.join(dir, "digest_a"), digest_a)
    :persistent_term.put(:rotation, ports)
    # Requests in flight, indexed by port.
    inflight = :counters.new(Enum.max(ports), [:atomics])
    spawn_link(fn -> watch(dir, "0", ports, inflight) end)
    turn = :atomics.new(1, [])

    request = fn reader ->
      port = pick(turn, inflight)

      try do
        port |> one(reader) |> Map.put(:port, port)
      after
        :counters.sub(inflight, port, 1)
      end
    end

    for(
      {reader, t0, _t1, answer} <- run(dir, clients, request),
      do: Map.merge(answer, %{reader: reader, t0: t0})
    )
    |> judge(pages_a, digest_a, dir)
  end

  # The next port in rotation, counted in flight, then checked again: a port
  # taken out is either seen in flight by watch/4 or not used.
  defp pick(turn, inflight) do
    rotation = :persistent_term.get(:rotation)
    port = Enum.at(rotation, rem(:atomics.add_get(turn, 1, 1), length(rotation)))
    :counters.add(inflight, port, 1)

    if port in :persistent_term.get(:rotation),
      do: port,
      else: :counters.sub(inflight, port, 1) && pick(turn, inflight)
  end

  # DIR/rotation's newest generation put in force, acknowledged once drained.
  defp watch(dir, gen, current, inflight) do
    Process.sleep(10)

    with {:ok, text} <- File.read(Path.join(dir, "rotation")),
         [g | ports] when g != gen <- String.split(text) do
      rotation = Enum.map(ports, &String.to_integer/1)
      :persistent_term.put(:rotation, rotation)
      for port <- current -- rotation, do: drained(inflight, port)
      File.write!(Path.join(dir, "ack_#{g}"), "")
      watch(dir, g, rotation, inflight)
    else
      _ -> watch(dir, gen, current, inflight)
    end
  end

  defp drained(inflight, port) do
    if :counters.get(inflight, port) > 0, do: Process.sleep(1) && drained(inflight, port)
  end

  # Every reader's page from every node: one page per reader (as JSON: an
  # object's keys in any order), one digest.
  defp baseline(ports) do
    answers =
      for reader <- readers(), port <- ports do
        case one(port, reader) do
          %{status: 200, body: body, digest: d} when is_binary(d) -> {port, {reader, body, d}}
          other -> fail("#{reader || "anonymous"}'s first page from #{port}: #{inspect(other)}")
        end
      end

    unique =
      answers
      |> Enum.map(fn {_port, {reader, body, d}} -> {reader, Jason.decode!(body), d} end)
      |> Enum.uniq()

    unless length(unique) == 5 and length(Enum.uniq_by(unique, &elem(&1, 2))) == 1,
      do:
        fail(
          "the nodes do not answer alike at start: #{length(unique)} pages\n" <> apart(answers)
        )

    bodies = Map.new(answers, fn {_port, {reader, body, _}} -> {reader, body} end)

    unless bodies["member"] =~ ~s("terminal_commit"),
      do: fail("A shows the member no terminal_commit")

    {bodies, unique |> hd() |> elem(2)}
  end

  # Each port's page for the first reader whose pages differ, from the first
  # byte where they part (or every reader's digests, when only those differ).
  defp apart(answers) do
    parted =
      answers
      |> Enum.group_by(fn {_port, {reader, _, _}} -> reader end)
      |> Enum.find(fn {_, pages} -> length(Enum.uniq_by(pages, &elem(elem(&1, 1), 1))) > 1 end)

    case parted do
      nil ->
        Enum.map_join(answers, "\n", fn {port, {reader, _, d}} ->
          "#{reader || "anonymous"} from #{port}: #{d}"
        end)

      {reader, pages} ->
        from = :binary.longest_common_prefix(for {_, {_, body, _}} <- pages, do: body)

        Enum.map_join(pages, "\n", fn {port, {_, body, digest}} ->
          rest = binary_part(body, from, min(300, byte_size(body) - from))

          "#{reader || "anonymous"} from #{port} (#{String.slice(digest, 0, 16)}), " <>
            "#{byte_size(body)} bytes, from byte #{from}: #{inspect(rest)}"
        end)
    end
  end

  defp one(port, reader) do
    case get(port, reader) do
      {:ok, status, h, body} ->
        %{status: status, body: body, node: h["x-served-by-node"], digest: h["x-policy-digest"]}

      {:error, reason} ->
        %{status: :error, body: inspect(reason), node: nil, digest: nil}
    end
  end

  defp strip(map, key) when is_map(map),
    do: Map.new(Map.delete(map, key), fn {k, v} -> {k, strip(v, key)} end)

  defp strip(list, key) when is_list(list), do: Enum.map(list, &strip(&1, key))
  defp strip(other, _key), do: other

  defp verdict(a, pages, digest_a, digest_b) do
    cond do
      a.status != 200 -> "status #{inspect(a.status)}: #{String.slice(a.body, 0, 200)}"
      is_nil(a.node) -> "no x-served-by-node"
      a.digest == digest_a and Jason.decode(a.body) == {:ok, pages.a[a.reader]} -> :a
      a.digest == digest_b and Jason.decode(a.body) == {:ok, pages.b[a.reader]} -> :b
      a.digest in [digest_a, digest_b] -> "not its digest's page: #{String.slice(a.body, 0, 200)}"
      true -> "a digest neither A's nor B's: #{inspect(a.digest)}"
    end
  end

  defp judge(answers, pages_a, digest_a, dir) do
    read = &File.read!(Path.join(dir, &1))
    digest_b = String.trim(read.("digest_b"))
    {start, stop} = {mark(dir, "window_start"), mark(dir, "window_end")}

    pages_a = Map.new(pages_a, fn {r, p} -> {r, Jason.decode!(p)} end)

    pages_b = Map.new(pages_a, fn {r, p} -> {r, strip(p, r == "member" && "terminal_commit")} end)

    name = &(%{digest_a => "A", digest_b => "B"}[&1] || inspect(&1))

    judged =
      for a <- answers do
        phase = if a.t0 < start, do: :before, else: if(a.t0 < stop, do: :during, else: :after)

        Map.merge(a, %{
          phase: phase,
          verdict: verdict(a, %{a: pages_a, b: pages_b}, digest_a, digest_b)
        })
      end

    failed =
      for %{verdict: why} = a <- judged,
          is_binary(why),
          do: "#{a.reader || "anonymous"} via #{a.port}, #{a.phase}: #{why}"

    phases =
      Enum.group_by(judged, & &1.phase)
      |> Map.new(fn {p, list} -> {p, Enum.frequencies_by(list, & &1.digest)} end)

    only? = &(Enum.sort(Map.keys(phases[&1] || %{})) == Enum.sort(&2))

    show =
      &Enum.map_join(Enum.sort_by(phases[&1] || %{}, fn {d, _} -> name.(d) end), " ", fn {d, n} ->
        "#{name.(d)} #{n}"
      end)

    window = :erlang.float_to_binary((stop - start) / 1_000_000, decimals: 1)
    member = &Enum.filter(judged, fn a -> a.reader == "member" and a.digest == &1 end)
    shown = &Enum.count(member.(&1), fn a -> a.body =~ ~s("terminal_commit") end)

    results = [
      check(
        failed == [],
        "#{length(judged)} requests, #{length(failed)} failed" <>
          Enum.map_join(Enum.take(failed, 10), &"\n       failed: #{&1}")
      ),
      check(only?.(:before, [digest_a]), "before the window, only A answered: #{show.(:before)}"),
      check(
        only?.(:during, [digest_a, digest_b]),
        "during it (#{window} s), both: #{show.(:during)}"
      ),
      check(only?.(:after, [digest_b]), "after it, only B: #{show.(:after)}"),
      check(
        shown.(digest_a) == length(member.(digest_a)) and shown.(digest_b) == 0 and
          member.(digest_b) != [],
        "the member (a ledger reader) saw terminal_commit in #{shown.(digest_a)} of A's #{length(member.(digest_a))} answers, " <>
          "in #{shown.(digest_b)} of B's #{length(member.(digest_b))}"
      )
    ]

    record = %{
      requests: length(judged),
      failed: length(failed),
      failures: Enum.take(failed, 20),
      window_ms: div(stop - start, 1000),
      digests: %{a: digest_a, b: digest_b},
      phases: phases,
      by_node_and_digest: Enum.frequencies_by(judged, &"#{&1.node} #{name.(&1.digest)}"),
      nodes: for(line <- String.split(read.("nodes"), "\n", trim: true), do: Jason.decode!(line)),
      gate: Jason.decode!(read.("gate.json"))
    }

    File.write!(Path.join(dir, "record.json"), Jason.encode_to_iodata!(record, pretty: true))

    File.write!(
      Path.join(dir, "line"),
      "rolling replace: #{record.requests} requests, #{record.failed} failed, window #{window} s, " <>
        "digests before/during/after: #{show.(:before)} / #{show.(:during)} / #{show.(:after)}"
    )

    halt(results)
  end
end

RollingReplace.Load.main(System.argv())
