# Load against the example host's running release, every answer checked.
#
#   MIX_ENV=test mix run --no-start examples/drills/faults/load.exs -- \
#     --port 4000 [--clients 50] [--duration 60] [--database-url URL] [--allow-503]
#
# N clients (50), each on its own keep-alive connection, for a fixed time
# (60 s), mix the five readers over every route: pages (default size or 200,
# from a cursor or not), attempts, inventories, delegations, POSTs of attempts
# and revokes of the links they minted (by who may, and refused to the rest).
# Every answer is checked: no 5xx (with --allow-503, a JSON 503 is counted
# apart); no `SECRET` nor the panic probe's message; whole JSON; each attempt
# at the tier the library gives its reader (Faults.Expected, from the
# database), every attempt the reader may see in the page's span on it,
# oldest first, within its limit, "next" its last id, each record's keys the
# schedule's at its tier; the contract's statuses. Prints req/s, latency and
# every count; exits 1 when any check failed (the database read with psql).
Code.require_file("http.exs", __DIR__)
Code.require_file("expected.exs", __DIR__)

defmodule Faults.Load do
  @moduledoc false

  alias Faults.{Expected, HTTP}
  alias OpenAgents.Delegations.Target
  alias OpenAgents.Transparency.WorkDisclosure

  @readers [nil, "stranger", "member", "owner", "operator"]
  @users ["stranger", "member", "owner"]
  # Who may request work on the repository, and who may not.
  @creators ["member", "operator"]
  @refused_creators ["stranger", "owner"]
  @slug "acme-widgets"
  @markers ["SECRET", "PANIC-PROBE-FIRED"]

  # How often each kind of request is made, out of 100.
  @mix [
    page: 40,
    attempt: 26,
    targets: 12,
    delegation: 12,
    create: 4,
    revoke: 3,
    refused: 3
  ]

  def main(argv) do
    {opts, _, _} =
      OptionParser.parse(argv,
        strict: [
          port: :integer,
          clients: :integer,
          duration: :integer,
          database_url: :string,
          allow_503: :boolean
        ]
      )

    port = Keyword.get(opts, :port, 4000)
    clients = Keyword.get(opts, :clients, 50)
    duration = Keyword.get(opts, :duration, 60)
    url = Keyword.get(opts, :database_url) || System.fetch_env!("DATABASE_URL")

    table = :ets.new(:faults, [:public, :set, write_concurrency: true, read_concurrency: true])
    {:ok, snapshot} = Expected.read(url)
    # faults/run.sh dbdown waits for this line before it stops PostgreSQL.
    IO.puts("load: database snapshot read")
    revoked_before = for {id, %{"revoked" => true}} <- snapshot.links, into: MapSet.new(), do: id
    # Attempts there before the run are on every page they may be on from
    # the start; one a POST created, from the moment its 201 was read.
    created = for id <- Map.keys(snapshot.attempts), do: {{:created, id}, 0}
    # Page cursors: attempts with no link, which no revoke can make dark.
    cursors = for {id, %{"link" => nil}} <- snapshot.attempts, do: id

    :ets.insert(table, [
      {:snapshot, snapshot},
      {:revoked_before, revoked_before},
      {:cursors, cursors} | created
    ])

    state = %{
      port: port,
      table: table,
      allow_503: Keyword.get(opts, :allow_503, false),
      deadline: now() + duration * 1_000_000
    }

    poller = spawn_link(fn -> poll(table, url) end)
    # The database-down run waits for this line before it stops PostgreSQL:
    # the first snapshot needs it up.
    IO.puts("load: first snapshot read; #{clients} clients starting")
    started = now()

    results =
      1..clients
      |> Enum.map(fn n -> Task.async(fn -> client(state, n) end) end)
      |> Task.await_many(:infinity)

    elapsed = (now() - started) / 1_000_000
    Process.unlink(poller)
    Process.exit(poller, :kill)

    # The deferred records: attempts created after the last snapshot.
    {:ok, final} = Expected.read(url)
    :ets.insert(table, {:snapshot, final})

    deferred =
      for %{deferred: list} <- results,
          item <- list,
          problem = check_deferred(state, item),
          do: problem

    report(results, deferred, elapsed, clients)
  end

  defp now, do: System.monotonic_time(:microsecond)

  defp poll(table, url) do
    Process.sleep(500)

    case Expected.read(url) do
      {:ok, snapshot} -> :ets.insert(table, {:snapshot, snapshot})
      {:error, _} -> :database_down
    end

    poll(table, url)
  end

  # ── one client ────────────────────────────────────────────────────────

  defp client(state, n) do
    :rand.seed(:exsss, {n, 17, 4242})
    acc = %{latencies: [], counts: %{}, problems: [], deferred: []}
    loop(state, nil, acc)
  end

  defp loop(state, socket, acc) do
    if now() >= state.deadline do
      if socket, do: :gen_tcp.close(socket)
      acc
    else
      socket = socket || connect(state)
      {socket, acc} = one(state, socket, pick(), acc)
      loop(state, socket, acc)
    end
  end

  defp connect(state) do
    case HTTP.connect(state.port) do
      {:ok, socket} -> socket
      {:error, _} -> nil
    end
  end

  defp pick do
    roll = :rand.uniform(100)

    Enum.reduce_while(@mix, roll, fn {kind, weight}, left ->
      if left <= weight, do: {:halt, kind}, else: {:cont, left - weight}
    end)
  end

  defp one(_state, nil, _kind, acc), do: {nil, count(acc, :transport)}

  defp one(state, socket, kind, acc) do
    {method, path, handle, body, check} = request(state, kind)
    sent = now()

    # A server may close a keep-alive connection between two requests (Bandit
    # does after an error it rendered): the request is sent again, once, on
    # a fresh connection. Only a failure there is a transport error.
    {socket, result} =
      case HTTP.request(socket, method, path, handle, body) do
        {:error, _} ->
          close(socket)
          socket = connect(state)
          {socket, socket && HTTP.request(socket, method, path, handle, body)}

        ok ->
          {socket, ok}
      end

    answered = now()
    acc = %{acc | latencies: [answered - sent | acc.latencies]}

    case result do
      {:ok, status, headers, raw} ->
        socket = if headers["connection"] == "close", do: close(socket), else: socket
        # A 5xx names its request and the id the release logged it under.
        where = "#{method} #{path} as #{handle || "anonymous"}, #{headers["x-request-id"]}"
        {socket, judge(state, {status, raw, where}, check, {sent, answered}, acc)}

      _error ->
        if socket, do: close(socket)
        {nil, problem(acc, :transport, "#{method} #{path}: #{inspect(result)}")}
    end
  end

  defp close(socket) do
    :gen_tcp.close(socket)
    nil
  end

  defp count(acc, key), do: %{acc | counts: Map.update(acc.counts, key, 1, &(&1 + 1))}

  defp problem(acc, key, what) do
    acc = count(acc, key)

    if length(acc.problems) < 20 and what not in acc.problems,
      do: %{acc | problems: [what | acc.problems]},
      else: acc
  end

  # ── the requests ──────────────────────────────────────────────────────

  defp snapshot(state), do: :ets.lookup_element(state.table, :snapshot, 2)

  # A page of the default size or of 200, from the first attempt or after
  # one of the cursors.
  defp request(state, :page) do
    reader = Enum.random(@readers)
    limit = Enum.random([nil, 200])
    cursor = Enum.random([nil | :ets.lookup_element(state.table, :cursors, 2)])

    query =
      [limit && "limit=#{limit}", cursor && "after=#{cursor}"]
      |> Enum.reject(&is_nil/1)
      |> Enum.join("&")

    path = "/api/repositories/#{@slug}/attempts" <> if(query == "", do: "", else: "?" <> query)
    {"GET", path, reader, nil, {:page, reader, {limit || 50, cursor}}}
  end

  defp request(state, :attempt) do
    reader = Enum.random(@readers)
    id = state |> snapshot() |> Map.fetch!(:attempts) |> Map.keys() |> Enum.random()
    {"GET", "/api/attempts/#{id}", reader, nil, {:attempt, reader, id}}
  end

  defp request(_state, :targets) do
    reader = Enum.random(@readers)
    {"GET", "/api/targets", reader, nil, {:targets, reader}}
  end

  defp request(state, :delegation) do
    reader = Enum.random(@readers)

    attempt =
      state
      |> snapshot()
      |> Map.fetch!(:attempts)
      |> Map.values()
      |> Enum.filter(& &1["job"])
      |> Enum.random()

    {"GET", "/api/delegations/#{attempt["job"]}", reader, nil, {:delegation, reader, attempt}}
  end

  # Mostly by those who may; now and then by a user who may not (403).
  defp request(_state, :create) do
    reader = Enum.random(@creators ++ @creators ++ @refused_creators)
    kind = Enum.random(Target.kinds())
    body = Jason.encode!(%{issue_number: 1, target_kind: kind})
    check = if reader in @creators, do: {:create, reader}, else: {:refused, 403}
    {"POST", "/api/repositories/#{@slug}/attempts", reader, body, check}
  end

  defp request(state, :revoke) do
    case :ets.match(state.table, {{:minted, :"$1"}, :"$2"}, 1) do
      {[[link, account]], _} ->
        if :ets.insert_new(state.table, {{:revoke, link}, now(), nil}) do
          :ets.delete(state.table, {:minted, link})
          revoker = Enum.random([account, "operator"])
          {"POST", "/api/links/#{link}/revoke", revoker, "{}", {:revoke, link}}
        else
          request(state, :page)
        end

      _ ->
        request(state, :page)
    end
  end

  # A revoke the contract refuses: anonymous (401), or by a user who is
  # neither the link's account nor an operator (403); the link stays live.
  defp request(state, :refused) do
    case :ets.match(state.table, {{:minted, :"$1"}, :"$2"}, 1) do
      {[[link, account]], _} ->
        {reader, status} = Enum.random([{nil, 401}, {Enum.random(@users -- [account]), 403}])
        {"POST", "/api/links/#{link}/revoke", reader, "{}", {:refused, status}}

      _ ->
        {"POST", "/api/repositories/#{@slug}/attempts", nil, "{}", {:refused, 401}}
    end
  end

  # ── the checks ────────────────────────────────────────────────────────

  defp judge(state, {status, raw, where}, check, times, acc) do
    cond do
      String.contains?(raw, @markers) ->
        problem(acc, :never, "a never-listed value in #{status}: #{String.slice(raw, 0, 200)}")

      status == 503 and state.allow_503 ->
        case Jason.decode(raw) do
          {:ok, %{"errors" => _}} -> count(acc, :unavailable)
          _ -> problem(acc, :partial, "503 without a JSON error: #{String.slice(raw, 0, 200)}")
        end

      status >= 500 ->
        problem(acc, :server_error, "#{status} to #{where}: #{String.slice(raw, 0, 200)}")

      true ->
        case Jason.decode(raw) do
          {:ok, body} ->
            acc = count(acc, {:status, status})
            answer(state, check, status, body, times, acc)

          {:error, _} ->
            problem(acc, :partial, "#{status} not whole JSON: #{String.slice(raw, 0, 200)}")
        end
    end
  end

  defp reader(state, handle), do: handle && snapshot(state).users[handle]

  defp truth(state) do
    table = state.table

    revoke_of = fn link ->
      case :ets.lookup(table, {:revoke, link}) do
        [{_, started, done}] -> {started, done}
        [] -> nil
      end
    end

    {snapshot(state), :ets.lookup_element(table, :revoked_before, 2), revoke_of}
  end

  defp answer(state, {:page, handle, {limit, cursor}}, 200, %{"data" => items} = body, times, acc) do
    truth = truth(state)
    {snapshot, _, _} = truth
    reader = reader(state, handle)
    preload? = true
    next = body["next"]
    last = List.last(items)

    acc =
      cond do
        length(items) > limit ->
          problem(acc, :fields, "a page of #{length(items)} items, limit #{limit}")

        next != nil and (length(items) != limit or next != get_in(last, ["attempt", "id"])) ->
          problem(acc, :fields, "next #{inspect(next)} is not the last of a full page")

        true ->
          acc
      end

    {acc, shown} =
      Enum.reduce(items, {acc, MapSet.new()}, fn item, {acc, shown} ->
        id = get_in(item, ["attempt", "id"])
        acc = fields(acc, item)

        acc =
          case snapshot.attempts[id] do
            nil ->
              %{
                acc
                | deferred: [{:page, handle, true, times, id, item["tier"]} | acc.deferred]
              }

            record ->
              tier(
                acc,
                Expected.expected(record, reader, preload?, truth, times),
                item["tier"],
                id
              )
          end

        {acc, MapSet.put(shown, id)}
      end)

    {sent, _} = times
    # The page covers the attempts after its cursor up to its last item
    # known to the snapshot (to the end, on the last page); in that span
    # every attempt the reader may see must be on it.
    from = cursor && key(snapshot.attempts[cursor])
    known = for item <- items, r = snapshot.attempts[item["attempt"]["id"]], do: key(r)
    upto = if next == nil, do: nil, else: Enum.max(known, fn -> nil end)

    order = Enum.filter(known, & &1)

    acc =
      if order == Enum.sort(order),
        do: acc,
        else: problem(acc, :wrong_tier, "page for #{handle || "anonymous"} not oldest first")

    missing =
      for {id, record} <- snapshot.attempts,
          not MapSet.member?(shown, id),
          created_before?(state, id, sent),
          from == nil or key(record) > from,
          (next == nil and upto == nil) or (upto != nil and key(record) <= upto),
          {:exactly, tier} <- [Expected.expected(record, reader, preload?, truth, times)],
          tier != :dark,
          do: id

    case missing do
      [] ->
        count(acc, :checked)

      _ ->
        problem(
          acc,
          :wrong_tier,
          "page for #{handle || "anonymous"}: missing #{inspect(missing)}"
        )
    end
  end

  defp answer(state, {:attempt, handle, id}, status, body, times, acc) do
    truth = truth(state)
    {snapshot, _, _} = truth
    reader = reader(state, handle)
    expected = Expected.expected(snapshot.attempts[id], reader, true, truth, times)

    case {status, body, expected} do
      {404, _, {_, :dark}} ->
        count(acc, :checked)

      {404, _, {:either, _}} ->
        count(acc, :checked)

      {200, %{"data" => item}, _} ->
        acc
        |> fields(Map.take(item, ["tier", "attempt", "work_job"]))
        |> tier(expected, item["tier"], id)
        |> evidence(snapshot.evidence[id] || [], item["evidence"], reader, truth, times)
        |> traces(item, Map.get(snapshot.public_traces, id, 0))

      _ ->
        problem(
          acc,
          :wrong_tier,
          "attempt #{id} for #{handle}: #{status}, expected #{inspect(expected)}"
        )
    end
  end

  defp answer(_state, {:targets, nil}, status, _body, _times, acc),
    do: expect_status(acc, status, 401, "targets, anonymous")

  defp answer(state, {:targets, handle}, 200, %{"data" => entries}, _times, acc) do
    snapshot = snapshot(state)
    reader = reader(state, handle)
    visible = Enum.filter(snapshot.targets, &(reader["admin"] or &1["owner"] == reader["id"]))

    bad =
      for entry <- entries,
          [kind, _] = String.split(entry["ref"], ":", parts: 2),
          seam = entry["seam"],
          owner? =
            Enum.any?(snapshot.targets, &(&1["kind"] == kind and &1["owner"] == reader["id"])),
          seam != Target.seam(kind, seam["lifecycle"], owner?) or
            (kind == "box" and
               seam["lifecycle"] != Target.box_lifecycle(entry["substrate_state"])),
          do: entry

    cond do
      length(entries) != length(visible) ->
        problem(
          acc,
          :wrong_tier,
          "targets for #{handle}: #{length(entries)}, expected #{length(visible)}"
        )

      bad != [] ->
        problem(acc, :wrong_tier, "targets for #{handle}: #{inspect(bad)}")

      true ->
        count(acc, :checked)
    end
  end

  defp answer(state, {:delegation, handle, attempt}, status, body, times, acc) do
    truth = truth(state)

    case {Expected.expected(attempt, reader(state, handle), true, truth, times), status, body} do
      {{:exactly, :dark}, 404, _} ->
        count(acc, :checked)

      {{_, tier}, 200, %{"data" => seam}} when tier != :dark ->
        if seam == Target.delegation_seam(Target.job_lifecycle(attempt["job_status"])),
          do: count(acc, :checked),
          else: problem(acc, :wrong_tier, "delegation #{attempt["job"]}: #{inspect(seam)}")

      {expected, _, _} ->
        problem(
          acc,
          :wrong_tier,
          "delegation for #{handle}: #{status}, expected #{inspect(expected)}"
        )
    end
  end

  # The creator owns the link it minted: it sees its attempt at the tier
  # the rules give the link's account.
  defp answer(state, {:create, handle}, 201, %{"data" => item}, {_, answered}, acc) do
    reader = reader(state, handle)
    id = get_in(item, ["attempt", "id"])

    case item["link"] do
      %{"id" => link, "tier" => tier} ->
        :ets.insert(state.table, [{{:minted, link}, handle}, {{:created, id}, answered}])
        expected = Expected.live_tier(%{"account" => reader["id"], "tier" => tier}, reader)

        acc
        |> fields(Map.delete(item, "link"))
        |> tier({:exactly, expected}, item["tier"], id)

      other ->
        problem(
          acc,
          :lost,
          "attempt #{id} by #{handle} created without a link: #{inspect(other)}"
        )
    end
  end

  defp answer(state, {:revoke, link}, 200, %{"data" => %{"id" => link}}, _times, acc) do
    :ets.update_element(state.table, {:revoke, link}, {3, now()})
    count(acc, :checked)
  end

  defp answer(_state, {:refused, expected}, status, %{"errors" => _}, _times, acc),
    do: expect_status(acc, status, expected, "refused revoke")

  defp answer(_state, check, status, body, _times, acc),
    do:
      problem(
        acc,
        :status,
        "#{inspect(check)}: #{status} #{inspect(body) |> String.slice(0, 200)}"
      )

  # An attempt's place in the list: oldest first, then by id.
  defp key(%{"at" => at, "id" => id}), do: {at, id}

  defp created_before?(state, id, sent) do
    case :ets.lookup(state.table, {:created, id}) do
      [{_, at}] -> at < sent
      [] -> false
    end
  end

  defp expect_status(acc, status, status, _what), do: count(acc, :checked)

  defp expect_status(acc, status, expected, what),
    do: problem(acc, :status, "#{what}: #{status}, expected #{expected}")

  # The item's keys, and each record's keys exactly the schedule's at its tier.
  defp fields(acc, item) do
    tier = item["tier"]
    keys = fn map -> map |> Map.keys() |> Enum.sort() end

    at = fn family ->
      WorkDisclosure.fields_at(family, tier) |> Enum.map(&to_string/1) |> Enum.sort()
    end

    cond do
      keys.(item) != ["attempt", "tier", "work_job"] ->
        problem(acc, :fields, "item keys #{inspect(keys.(item))}")

      tier not in ~w(pulse ledger glass) ->
        problem(acc, :wrong_tier, "an item at tier #{inspect(tier)}")

      keys.(item["attempt"]) != at.(:attempt) ->
        problem(acc, :fields, "attempt at #{tier}: #{inspect(keys.(item["attempt"]))}")

      item["work_job"] != nil and keys.(item["work_job"]) != at.(:work_job) ->
        problem(acc, :fields, "work_job at #{tier}: #{inspect(keys.(item["work_job"]))}")

      true ->
        acc
    end
  end

  defp tier(acc, {:exactly, expected}, shown, id) do
    if Atom.to_string(expected) == shown,
      do: count(acc, :records),
      else: problem(acc, :wrong_tier, "attempt #{id}: #{shown}, expected #{expected}")
  end

  defp tier(acc, {:either, live}, shown, id) do
    if Atom.to_string(live) == shown,
      do: count(acc, :records),
      else:
        problem(acc, :wrong_tier, "attempt #{id} (revoke in flight): #{shown}, expected #{live}")
  end

  defp evidence(acc, rows, shown, reader, truth, times) do
    by_id = Map.new(shown, &{&1["id"], &1})

    Enum.reduce(rows, acc, fn row, acc ->
      case {Expected.expected(row, reader, true, truth, times), by_id[row["id"]]} do
        {{_, :dark}, nil} ->
          acc

        {{:either, _}, nil} ->
          acc

        {{_, tier}, %{} = edge} ->
          record_keys(acc, :evidence, tier, edge)

        {expected, other} ->
          problem(
            acc,
            :wrong_tier,
            "evidence #{row["id"]}: #{inspect(other)}, expected #{inspect(expected)}"
          )
      end
    end)
    |> then(fn acc ->
      if map_size(by_id) <= length(rows),
        do: acc,
        else: problem(acc, :wrong_tier, "unknown evidence shown")
    end)
  end

  defp traces(acc, item, public) do
    shown = item["traces"]

    if length(shown) == public,
      do: Enum.reduce(shown, acc, &record_keys(&2, :trace, item["tier"], &1)),
      else: problem(acc, :wrong_tier, "#{length(shown)} traces shown, #{public} public")
  end

  defp record_keys(acc, family, tier, record) do
    want = WorkDisclosure.fields_at(family, tier) |> Enum.map(&to_string/1) |> Enum.sort()

    if Enum.sort(Map.keys(record)) == want,
      do: count(acc, :records),
      else: problem(acc, :fields, "#{family} at #{tier}: #{inspect(Map.keys(record))}")
  end

  defp check_deferred(state, {:page, handle, preload?, times, id, shown}) do
    truth = truth(state)
    {snapshot, _, _} = truth

    case snapshot.attempts[id] do
      nil ->
        "page for #{handle}: attempt #{id} is not in the database"

      record ->
        case Expected.expected(record, reader(state, handle), preload?, truth, times) do
          {_, tier} when tier != :dark ->
            if Atom.to_string(tier) == shown,
              do: nil,
              else: "attempt #{id}: #{shown}, expected #{tier}"

          expected ->
            "attempt #{id}: #{shown}, expected #{inspect(expected)}"
        end
    end
  end

  # ── the report ────────────────────────────────────────────────────────

  defp report(results, deferred, elapsed, clients) do
    counts = Enum.reduce(results, %{}, &Map.merge(&2, &1.counts, fn _, a, b -> a + b end))
    latencies = results |> Enum.flat_map(& &1.latencies) |> Enum.sort() |> List.to_tuple()
    n = tuple_size(latencies)
    at = fn q -> if n == 0, do: 0, else: elem(latencies, min(n - 1, floor(q * n))) end
    ms = fn us -> :erlang.float_to_binary(us / 1000, decimals: 1) end
    get = &Map.get(counts, &1, 0)
    statuses = for {{:status, s}, c} <- Enum.sort(counts), do: "#{s}: #{c}"
    problems = Enum.flat_map(results, & &1.problems) ++ deferred

    failures =
      get.(:server_error) + get.(:never) + get.(:partial) + get.(:wrong_tier) + get.(:fields) +
        get.(:status) + get.(:transport) + get.(:lost) + length(deferred)

    IO.puts("""
    load: #{clients} clients, #{:erlang.float_to_binary(elapsed, decimals: 1)} s, #{n} requests, \
    #{round(n / elapsed)} req/s; latency p50 #{ms.(at.(0.5))} ms, p99 #{ms.(at.(0.99))} ms, \
    max #{ms.(at.(1.0))} ms
    load: statuses #{Enum.join(statuses, ", ")}; 503 (database down) #{get.(:unavailable)}
    load: #{get.(:checked)} answers and #{get.(:records)} records checked; \
    500 or above #{get.(:server_error)}, wrong tiers #{get.(:wrong_tier) + length(deferred)}, \
    wrong fields #{get.(:fields)}, never-listed values #{get.(:never)}, partial bodies \
    #{get.(:partial)}, unexpected statuses #{get.(:status)}, transport errors #{get.(:transport)}, \
    links lost #{get.(:lost)}\
    """)

    for problem <- problems |> Enum.uniq() |> Enum.take(20), do: IO.puts("  FAIL: " <> problem)
    if failures > 0, do: System.halt(1)
  end
end

Faults.Load.main(System.argv())
