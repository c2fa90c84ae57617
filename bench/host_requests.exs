# Disclosure inside the host's requests: the example Phoenix host
# (examples/host_app: Phoenix, Ecto, PostgreSQL, Bandit) serves
# GET /api/repositories/:slug/attempts for a repository of 200 attempts,
# each with a work job, to five readers; how much of each request is the
# library's disclosure, against what the seed modules would take for the same
# calls on the same loaded structs.
#
#     cd examples/host_app
#     MIX_ENV=prod DATABASE_URL=postgres://postgres:postgres@localhost:5432/perf_host_bench \
#       mix run --no-start ../../bench/host_requests.exs
#
# The database named by DATABASE_URL is the script's own: created and
# migrated if missing, seeded once (the host's HostApp.Seeds world, then
# attempts up to 200, in four kinds by turn: the owner's with a live link,
# the owner's with a revoked link, an agent's at ledger, an agent's at pulse;
# each with a work job).
#
# 1. Requests: the host's endpoint served by Bandit on HOST_BENCH_PORT
#    (4123), called over HTTP (:httpc, one keep-alive connection), in a
#    bounded loop: HOST_BENCH_ROUNDS (40) rounds, each one request per reader
#    (anonymous, stranger, member, owner, operator) in a rotated order. p50
#    and p99 of the request's wall time, client side.
# 2. The library's calls of one such request, replayed on the structs the
#    controller loads (the same query, the same preload, the same sources
#    built by HostApp.Disclosure): viewer/2 once, then per attempt
#    effective_tier/2, project(:attempt, ...) and, when the attempt shows,
#    project(:work_job, ...). The same calls with the seeds
#    (Reference.WorkDisclosure from ../shared/reference) on the same structs.
#    Median of HOST_BENCH_REPS (25) repetitions, seed and ours interleaved;
#    the answers are compared first.
#
# The share of the request: ours = our calls / request p50; the seed's =
# its calls / (request p50 - our calls + its calls), the request it would
# serve. viewer/2 makes the host's own database queries (Accounts.admin?/1,
# Repositories.member?/2) on both sides, so it is reported apart; the
# headline share is the per-record disclosure.
root = Path.expand("..", __DIR__)
Code.require_file(Path.join(root, "../shared/reference/load.exs"))
Code.require_file(Path.join(__DIR__, "support/harness.exs"))

defmodule Bench.HostRequests do
  @moduledoc false
  import Ecto.Query

  alias HostApp.Attempts
  alias OpenAgents.Accounts.User
  alias OpenAgents.Forge.{Assignment, Issue}
  alias OpenAgents.Repo
  alias OpenAgents.Repositories.Repository
  alias OpenAgents.Transparency.{ArtifactLink, WorkDisclosure}
  alias OpenAgents.Work.Job

  @attempts 200
  @readers [:anonymous, :stranger, :member, :owner, :operator]

  # ── the database ───────────────────────────────────────────────────────

  def seed! do
    HostApp.Release.migrate()
    {:ok, _} = Application.ensure_all_started(:host_app)
    HostApp.Seeds.run()
    repository = Repo.get_by!(Repository, slug: HostApp.Seeds.slug())
    issue = Repo.get_by!(Issue, repository_id: repository.id, number: 1)
    owner = Repo.get_by!(User, handle: "owner")
    have = Repo.aggregate(from(a in Assignment, where: a.repository_id == ^repository.id), :count)

    for n <- (have + 1)..@attempts//1 do
      {:ok, _} = Repo.transaction(fn -> attempt!(repository, issue, owner, n) end)
    end

    repository
  end

  defp attempt!(repository, issue, owner, n) do
    at = DateTime.add(~U[2026-09-01 00:00:00Z], n * 60)
    kind = rem(n, 4)

    principal =
      if kind in [0, 1],
        do: %{"type" => "user", "id" => owner.id},
        else: %{"type" => "agent", "id" => "agent-#{n}"}

    link =
      case WorkDisclosure.link_for_attempt(repository, principal, %{"roots" => ["/src"]}) do
        {:ok, link} -> link
        :none -> nil
      end

    job =
      Repo.insert!(%Job{
        kind: "forge_attempt",
        status: Enum.at(~w(completed failed running queued), kind),
        goal: "goal #{n}",
        budget_snapshot: %{"wall_clock_seconds" => 1800, "max_report_bytes" => 8192},
        report: "Attempt #{n}: " <> String.duplicate("report ", 40),
        error_code: if(kind == 1, do: "tests_failed"),
        model_id: "model-x",
        tool_call_count: n,
        continuation_count: rem(n, 3),
        usage: %{"input_tokens" => 1000 + n, "output_tokens" => 200 + n},
        started_at: at,
        completed_at: DateTime.add(at, 600)
      })

    assignment =
      Repo.insert!(%Assignment{
        repository_id: repository.id,
        issue_id: issue.id,
        work_job_id: job.id,
        target_kind: Enum.at(~w(box computer), rem(n, 2)),
        requesting_principal: principal,
        branch: "fix/#{n}",
        state: Enum.at(~w(completed failed running admitted), kind),
        terminal_branch: "fix/#{n}",
        terminal_commit: String.duplicate("ab", 20),
        admitted_at: at,
        started_at: DateTime.add(at, 5),
        finished_at: DateTime.add(at, 610),
        transparency_tier: Enum.at(~w(pulse ledger ledger pulse), kind),
        artifact_link_id: link && link.id,
        inserted_at: %{at | microsecond: {0, 6}},
        updated_at: %{at | microsecond: {0, 6}}
      })

    if link do
      link = Repo.update!(ArtifactLink.bind_changeset(link, assignment.id))
      if kind == 1, do: Repo.update!(ArtifactLink.revoke_changeset(link, %{"reason" => "bench"}))
    end
  end

  # ── requests ───────────────────────────────────────────────────────────

  defp headers(:anonymous), do: []
  defp headers(reader), do: [{~c"authorization", ~c"Bearer #{reader}"}]

  def requests(port, slug, rounds) do
    url = ~c"http://127.0.0.1:#{port}/api/repositories/#{slug}/attempts?limit=#{@attempts}"

    :ok =
      :httpc.set_options(
        max_sessions: 1,
        max_keep_alive_length: 10_000,
        keep_alive_timeout: 60_000
      )

    # Warm up: code loaded, connections open, the first query planned.
    for reader <- @readers, _ <- 1..3, do: get!(url, reader)

    samples =
      for round <- 1..rounds, reader <- rotate(@readers, rem(round, length(@readers))) do
        t0 = System.monotonic_time(:nanosecond)
        body = get!(url, reader)
        {reader, System.monotonic_time(:nanosecond) - t0, byte_size(body)}
      end

    Enum.group_by(samples, &elem(&1, 0), &Tuple.delete_at(&1, 0))
  end

  defp get!(url, reader) do
    {:ok, {{_, 200, _}, _headers, body}} =
      :httpc.request(:get, {url, headers(reader)}, [], body_format: :binary)

    body
  end

  defp rotate(list, 0), do: list
  defp rotate([h | t], k), do: rotate(t ++ [h], k - 1)

  # ── the library's calls of one request, replayed ──────────────────────

  # What the controller loads and builds for `reader`: the repository, the
  # user, the attempts with their work jobs and links, and the two sources
  # per attempt that HostApp.Disclosure hands to project/3.
  def loaded(slug, reader) do
    repository = OpenAgents.Repositories.get_by_slug(slug)
    user = if reader != :anonymous, do: OpenAgents.Accounts.get_by_handle("#{reader}")

    records =
      for assignment <- Attempts.batch(repository, nil, @attempts) do
        source =
          assignment
          |> Map.from_struct()
          |> Map.put(:requester_kind, Assignment.requester_kind(assignment))

        job = assignment.work_job
        job_source = job |> Map.from_struct() |> Map.put(:budget, Job.budget_bounds(job))
        {assignment, source, job_source}
      end

    %{repository: repository, user: user, records: records}
  end

  # The per-record calls of one page, as HostApp.Disclosure.item/2 makes them.
  def page(module, records, viewer) do
    for {assignment, source, job_source} <- records do
      tier = module.effective_tier(assignment, viewer)

      case module.project(:attempt, source, tier) do
        nil -> nil
        attempt -> {tier, attempt, module.project(:work_job, job_source, tier)}
      end
    end
  end

  defp time_ns(fun) do
    t0 = System.monotonic_time(:nanosecond)
    fun.()
    System.monotonic_time(:nanosecond) - t0
  end

  def replay(world, reps) do
    %{repository: repository, user: user, records: records} = world
    ours_viewer = WorkDisclosure.viewer(repository, user)
    seed_viewer = Reference.WorkDisclosure.viewer(repository, user)

    parity =
      ours_viewer == seed_viewer and
        page(WorkDisclosure, records, ours_viewer) ==
          page(Reference.WorkDisclosure, records, seed_viewer)

    sides = [
      ours_viewer: fn -> WorkDisclosure.viewer(repository, user) end,
      seed_viewer: fn -> Reference.WorkDisclosure.viewer(repository, user) end,
      ours_page: fn -> page(WorkDisclosure, records, ours_viewer) end,
      seed_page: fn -> page(Reference.WorkDisclosure, records, seed_viewer) end
    ]

    # Warm up, then interleave the sides, rotating their order each rep.
    for {_, fun} <- sides, _ <- 1..3, do: fun.()

    times =
      for rep <- 1..reps, {side, fun} <- rotate(sides, rem(rep, length(sides))) do
        :erlang.garbage_collect()
        {side, time_ns(fun)}
      end

    medians =
      times
      |> Enum.group_by(&elem(&1, 0), &elem(&1, 1))
      |> Map.new(fn {side, list} -> {side, Bench.Harness.median(list)} end)

    Map.put(medians, :parity, parity)
  end

  # ── report ─────────────────────────────────────────────────────────────

  defp percentile(list, p) do
    sorted = Enum.sort(list)
    Enum.at(sorted, min(length(sorted) - 1, round(p / 100 * (length(sorted) - 1))))
  end

  defp us(ns), do: :erlang.float_to_binary(ns / 1000, decimals: 0)
  defp pct(x), do: :erlang.float_to_binary(x * 100, decimals: 1) <> "%"

  def main do
    port = Bench.Harness.env_int("HOST_BENCH_PORT", 4123)
    rounds = Bench.Harness.env_int("HOST_BENCH_ROUNDS", 40)
    reps = Bench.Harness.env_int("HOST_BENCH_REPS", 25)

    Application.put_env(
      :host_app,
      HostAppWeb.Endpoint,
      Keyword.merge(Application.get_env(:host_app, HostAppWeb.Endpoint, []),
        server: true,
        http: [ip: {127, 0, 0, 1}, port: port]
      )
    )

    Logger.configure(level: :warning)
    repository = seed!()
    {:ok, _} = Application.ensure_all_started(:inets)
    slug = repository.slug

    count =
      Repo.aggregate(from(a in Assignment, where: a.repository_id == ^repository.id), :count)

    jobs =
      Repo.aggregate(
        from(a in Assignment,
          where: a.repository_id == ^repository.id and not is_nil(a.work_job_id)
        ),
        :count
      )

    IO.puts("""
    openagents_policy inside the host's requests: GET /api/repositories/#{slug}/attempts
    OTP #{System.otp_release()}, Elixir #{System.version()}, schedulers #{:erlang.system_info(:schedulers_online)}, MIX_ENV=#{Mix.env()}
    #{Bench.Harness.revision()}
    #{count} attempts, #{jobs} with a work job; Bandit on 127.0.0.1:#{port}, PostgreSQL #{Repo.config()[:hostname] || "localhost"}/#{Repo.config()[:database]}
    #{rounds} rounds x #{length(@readers)} readers over HTTP; the library's calls replayed #{reps} times per side
    load average at start: #{Bench.Harness.loadavg()}
    """)

    samples = requests(port, slug, rounds)

    rows =
      for reader <- @readers do
        times = Enum.map(samples[reader], &elem(&1, 0))
        [{_, bytes} | _] = samples[reader]
        replayed = replay(loaded(slug, reader), reps)
        p50 = percentile(times, 50)
        ours = replayed.ours_page
        seed = replayed.seed_page
        ours_share = ours / p50
        seed_share = seed / (p50 - ours + seed)
        with_viewer = fn page, viewer -> page + viewer end
        ours_v = with_viewer.(ours, replayed.ours_viewer)
        seed_v = with_viewer.(seed, replayed.seed_viewer)

        %{
          reader: reader,
          bytes: bytes,
          p50: p50,
          p99: percentile(times, 99),
          ours: ours,
          seed: seed,
          ours_viewer: replayed.ours_viewer,
          seed_viewer: replayed.seed_viewer,
          ours_share: ours_share,
          seed_share: seed_share,
          ours_share_v: ours_v / p50,
          seed_share_v: seed_v / (p50 - ours_v + seed_v),
          parity: replayed.parity
        }
      end

    Bench.Harness.table(
      [
        "reader",
        "body bytes",
        "request p50 µs",
        "p99 µs",
        "page calls: seed µs",
        "ours µs",
        "viewer/2: seed µs",
        "ours µs",
        "share: seed",
        "ours",
        "with viewer/2: seed",
        "ours",
        "same answers"
      ],
      for r <- rows do
        [
          "#{r.reader}",
          "#{r.bytes}",
          us(r.p50),
          us(r.p99),
          us(r.seed),
          us(r.ours),
          us(r.seed_viewer),
          us(r.ours_viewer),
          pct(r.seed_share),
          pct(r.ours_share),
          pct(r.seed_share_v),
          pct(r.ours_share_v),
          if(r.parity, do: "yes", else: "NO")
        ]
      end,
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
    )

    all = Enum.flat_map(@readers, fn reader -> Enum.map(samples[reader], &elem(&1, 0)) end)
    mean = fn key -> Enum.sum(Enum.map(rows, &Map.fetch!(&1, key))) / length(rows) end

    IO.puts("""

    all requests: p50 #{us(percentile(all, 50))} µs, p99 #{us(percentile(all, 99))} µs (#{length(all)} requests)
    page calls: #{@attempts} x effective_tier/2, then project(:attempt, ...) and, for an attempt
    that shows, project(:work_job, ...), on the structs the controller loads. viewer/2 makes the
    host's own queries (Accounts.admin?/1, Repositories.member?/2) on both sides.
    share: ours = our calls / request p50; seed = its calls / (p50 - our calls + its calls).

    disclosure's share of the request: seed #{pct(mean.(:seed_share))}, ours #{pct(mean.(:ours_share))} (mean over the five readers; ours / seed = #{:erlang.float_to_binary(mean.(:ours_share) / mean.(:seed_share), decimals: 3)})
    with viewer/2 counted: seed #{pct(mean.(:seed_share_v))}, ours #{pct(mean.(:ours_share_v))}
    load average at end: #{Bench.Harness.loadavg()}
    """)

    unless Enum.all?(rows, & &1.parity), do: IO.puts("PARITY MISMATCH between seed and ours")
  end
end

Bench.HostRequests.main()
