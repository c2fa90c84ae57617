# The library's share of a real request: the example Phoenix host
# (examples/host_app: Phoenix, Ecto, PostgreSQL, Bandit) serving
# GET /api/repositories/:slug/attempts?limit=200 for a repository of 200
# attempts, each with a work job, to its five readers.
#
#     make bench-host    # cd examples/host_app && MIX_ENV=bench mix run --no-start ../../bench/host_requests.exs
#
# The database (HOST_BENCH_DATABASE_URL, default .../host_bench; see the
# host's config/bench.exs) is created and migrated if missing, seeded once
# (HostApp.Seeds, then attempts up to 200 in four kinds by turn: the owner's
# with a live link, the owner's with a revoked link, an agent's at ledger,
# an agent's at pulse) and left in place for the next run. The server
# (Bandit on 127.0.0.1:HOST_BENCH_PORT, default 4123) is stopped at the end.
#
# 1. Requests over HTTP on loopback (:httpc, one keep-alive connection),
#    timed client side by Benchee, HOST_BENCH_TIME seconds per reader
#    (default 5): p50 and p99.
# 2. The library's calls of one such request, replayed on the structs the
#    controller loads (HostApp.Attempts.batch/3, the sources HostApp.Disclosure
#    builds): viewer/2 once; per attempt effective_tier/2, project(:attempt,
#    ...) and, when it shows, project(:work_job, ...). The same calls with the
#    seeds (Reference.WorkDisclosure, ../shared/reference/load.exs). Answers
#    are compared first: seed against ours, and ours against the page served.
#    Timed by Benchee (BENCH_TIME seconds per job, default 0.4): medians.
#
# Shares of the request: ours = our calls / request p50; the seed's = its
# calls / (p50 - our calls + its calls), the request it would serve. viewer/2
# asks the host's database (Accounts.admin?/1, Repositories.member?/2) on
# both sides, so its share is printed on its own. Reports; never fails on a
# timing.
root = Path.expand("..", __DIR__)
Code.require_file(Path.join(root, "../shared/reference/load.exs"))
Code.require_file(Path.join(__DIR__, "support/harness.exs"))

defmodule Bench.HostRequests do
  @moduledoc false
  alias Bench.Harness
  alias HostApp.{Attempts, Disclosure, Seeds}
  alias OpenAgents.{Accounts, Repo, Repositories}
  alias OpenAgents.Forge.Assignment
  alias OpenAgents.Transparency.{ArtifactLink, WorkDisclosure}
  alias OpenAgents.Work.Job

  @attempts 200
  @readers ~w(anonymous stranger member owner operator)
  @jobs ["seed page", "ours page", "seed viewer", "ours viewer"]

  def seed! do
    # `mix run --no-start` leaves Logger at Mix's level; a logged query would
    # be timed with the request.
    Logger.configure(level: Application.fetch_env!(:logger, :level))
    HostApp.Release.migrate()
    {:ok, _} = Application.ensure_all_started(:host_app)
    Seeds.run()
    repository = Repositories.get_by_slug(Seeds.slug())
    issue = Attempts.issue(repository, 1)
    owner = Accounts.get_by_handle("owner")
    have = length(Attempts.batch(repository, nil, @attempts))

    for n <- (have + 1)..@attempts//1,
        do: {:ok, _} = Repo.transaction(fn -> attempt!(repository, issue, owner, n) end)

    repository
  end

  defp attempt!(repository, issue, owner, n) do
    kind = rem(n, 4)
    at = DateTime.add(~U[2026-09-01 00:00:00Z], n * 60)

    principal =
      if kind < 2,
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
        model_id: "model-x",
        tool_call_count: n,
        usage: %{"input_tokens" => 1000 + n, "output_tokens" => 200 + n},
        started_at: at
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
        admitted_at: at,
        transparency_tier: Enum.at(~w(pulse ledger ledger pulse), kind),
        artifact_link_id: link && link.id
      })

    if link do
      Repo.update!(ArtifactLink.bind_changeset(link, assignment.id))
      if kind == 1, do: {:ok, _} = Attempts.stamp(link.id, %{"reason" => "bench"})
    end
  end

  defp get!(url, reader) do
    headers = if reader == "anonymous", do: [], else: [{~c"authorization", ~c"Bearer #{reader}"}]
    {:ok, {{_, 200, _}, _, body}} = :httpc.request(:get, {url, headers}, [], body_format: :binary)
    body
  end

  # The items of one page as HostApp.Disclosure.item/2 makes them, with
  # `module`'s calls on sources built beforehand; nil for a dark attempt.
  defp page(module, records, viewer) do
    for {assignment, source, job_source} <- records do
      tier = module.effective_tier(assignment, viewer)

      with %{} = attempt <- module.project(:attempt, source, tier),
           do: %{
             tier: tier,
             attempt: attempt,
             work_job: module.project(:work_job, job_source, tier)
           }
    end
  end

  # One reader's replay: answers compared, then the four jobs timed.
  defp replay(repository, reader, body) do
    user = if reader != "anonymous", do: Accounts.get_by_handle(reader)
    batch = Attempts.batch(repository, nil, @attempts + 1)

    records =
      for a <- batch do
        source = a |> Map.from_struct() |> Map.put(:requester_kind, Assignment.requester_kind(a))

        {a, source,
         a.work_job |> Map.from_struct() |> Map.put(:budget, Job.budget_bounds(a.work_job))}
      end

    {ours, seed} =
      {WorkDisclosure.viewer(repository, user), Reference.WorkDisclosure.viewer(repository, user)}

    items = for a <- batch, item = Disclosure.item(a, ours), do: item
    served = Jason.decode!(body)

    same? =
      ours == seed and
        page(WorkDisclosure, records, ours) == page(Reference.WorkDisclosure, records, seed) and
        Enum.reject(page(WorkDisclosure, records, ours), &is_nil/1) == items and
        served == Jason.decode!(Jason.encode!(%{data: items, next: served["next"]}))

    times =
      Harness.benchee(%{
        "ours viewer" => fn -> WorkDisclosure.viewer(repository, user) end,
        "seed viewer" => fn -> Reference.WorkDisclosure.viewer(repository, user) end,
        "ours page" => fn -> page(WorkDisclosure, records, ours) end,
        "seed page" => fn -> page(Reference.WorkDisclosure, records, seed) end
      })

    {length(items), same?, Map.new(times, fn {job, stats} -> {job, stats.median} end)}
  end

  defp us(ns), do: :erlang.float_to_binary(ns / 1000, decimals: 2)
  defp ms(ns), do: :erlang.float_to_binary(ns / 1_000_000, decimals: 2)
  defp pct(x), do: :erlang.float_to_binary(x * 100, decimals: 2) <> "%"

  def main do
    port = Harness.env_int("HOST_BENCH_PORT", 4123)
    repository = seed!()

    if function_exported?(Mix, :ensure_application!, 1),
      do: apply(Mix, :ensure_application!, [:inets])

    {:ok, _} = Application.ensure_all_started(:inets)
    :ok = :httpc.set_options(max_sessions: 1, keep_alive_timeout: 60_000)

    url =
      ~c"http://127.0.0.1:#{port}/api/repositories/#{repository.slug}/attempts?limit=#{@attempts}"

    time = Harness.env_int("HOST_BENCH_TIME", 5)

    IO.puts("""
    openagents_policy inside the host's requests: GET /api/repositories/#{repository.slug}/attempts?limit=#{@attempts}
    OTP #{System.otp_release()}, Elixir #{System.version()}, schedulers #{:erlang.system_info(:schedulers_online)}, MIX_ENV=#{Mix.env()}
    #{Harness.revision()}; #{length(Attempts.batch(repository, nil, @attempts + 1))} attempts with work jobs, PostgreSQL database #{Repo.config()[:database]} (kept), Bandit on 127.0.0.1:#{port}
    load average at start: #{Harness.loadavg()}
    """)

    bodies = Map.new(@readers, &{&1, get!(url, &1)})

    requests =
      Harness.benchee(Map.new(@readers, &{&1, fn -> get!(url, &1) end}),
        warmup: 1,
        time: time,
        measure_function_call_overhead: false
      )

    rows =
      for reader <- @readers do
        %{percentiles: %{50 => p50, 99 => p99}, sample_size: n} = requests[reader]
        {items, same?, t} = replay(repository, reader, bodies[reader])
        seed_share = fn calls, ours -> calls / (p50 - ours + calls) end

        %{
          cells: [reader, "#{items}", "#{n}", ms(p50), ms(p99)] ++ Enum.map(@jobs, &us(t[&1])),
          same?: same?,
          shares: [
            seed_share.(t["seed page"], t["ours page"]),
            t["ours page"] / p50,
            seed_share.(t["seed viewer"], t["ours viewer"]),
            t["ours viewer"] / p50
          ]
        }
      end

    Harness.table(
      ["reader", "items", "requests", "p50 ms", "p99 ms"] ++
        Enum.map(@jobs, &"#{&1} µs") ++
        ["page share: seed", "ours", "viewer/2 share: seed", "ours", "same"],
      for row <- rows do
        row.cells ++ Enum.map(row.shares, &pct/1) ++ [if(row.same?, do: "yes", else: "NO")]
      end,
      Enum.to_list(1..12)
    )

    [seed_page, ours_page, seed_viewer, ours_viewer] =
      Enum.zip_with(Enum.map(rows, & &1.shares), &(Enum.sum(&1) / length(&1)))

    IO.puts("""

    disclosure's share of the request (mean of the five readers): seed #{pct(seed_page)}, ours #{pct(ours_page)}
    viewer/2's share on its own: seed #{pct(seed_viewer)}, ours #{pct(ours_viewer)}
    load average at end: #{Harness.loadavg()}
    """)

    unless Enum.all?(rows, & &1.same?), do: IO.puts("MISMATCH: see the `same` column")
    :ok = Application.stop(:host_app)
  end
end

Bench.HostRequests.main()
