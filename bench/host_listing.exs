# An anonymous reader's listing of one issue with many attempts it may not
# see, each with a work job carrying an 8 KB report, read as the OpenAgents
# app reads it (`attempts_for_issue/2`: every attempt with its work job and
# link preloaded, the dark ones dropped in Elixir) and through
# `WorkDisclosure.where_visible/2` (the dark ones never read).
#
#     cd examples/host_app && MIX_ENV=bench mix run --no-start ../../bench/host_listing.exs
#
# HOST_BENCH_DATABASE_URL names the database (config/bench.exs; created,
# migrated and seeded if missing, then kept); LISTING_SIZES the counts of
# hidden attempts (default 3000,30000), one issue each, half of them with a
# `dark` tier column and no link, half with a revoked link, plus 10 visible
# ones at `pulse`; LISTING_RUNS the runs per way (default 5). Both ways'
# attempts are compared first; then each is timed (:timer.tc, median), and
# the rows and report bytes each reads from PostgreSQL are counted. Reports; never
# fails on a timing.
Code.require_file(Path.join(__DIR__, "support/harness.exs"))

defmodule Bench.HostListing do
  @moduledoc false
  import Ecto.Query

  alias Bench.Harness
  alias HostApp.Seeds
  alias OpenAgents.{Repo, Repositories}
  alias OpenAgents.Forge.{Assignment, Issue}
  alias OpenAgents.Transparency.{ArtifactLink, WorkDisclosure}
  alias OpenAgents.Work.Job

  @visible 10
  @report String.duplicate("r", 8 * 1024)

  def start! do
    Logger.configure(level: :warning)
    HostApp.Release.migrate()
    for app <- [:ecto_sql, :postgrex], do: {:ok, _} = Application.ensure_all_started(app)
    {:ok, _} = Repo.start_link()
    Seeds.run()
    Repositories.get_by_slug(Seeds.slug())
  end

  # The issue numbered `hidden` with its attempts, inserted once.
  def issue!(repository, hidden) do
    case Repo.get_by(Issue, repository_id: repository.id, number: hidden) do
      %Issue{} = issue -> issue
      nil -> insert!(repository, hidden)
    end
  end

  defp insert!(repository, hidden) do
    {:ok, issue} =
      Repo.transaction(fn -> insert_issue!(repository, hidden) end, timeout: :infinity)

    issue
  end

  defp insert_issue!(repository, hidden) do
    issue = Repo.insert!(%Issue{repository_id: repository.id, number: hidden, title: "listing"})
    owner = Repo.one!(from(u in OpenAgents.Accounts.User, where: u.handle == "owner"))
    now = DateTime.utc_now() |> DateTime.truncate(:second)

    1..(hidden + @visible)
    |> Enum.chunk_every(1_000)
    |> Enum.each(fn chunk ->
      rows = Enum.map(chunk, &row(&1, hidden, repository, issue, owner, now))
      Repo.insert_all(Job, Enum.map(rows, & &1.job))
      Repo.insert_all(ArtifactLink, for(%{link: link} <- rows, link, do: link))
      Repo.insert_all(Assignment, Enum.map(rows, & &1.attempt))
    end)

    issue
  end

  defp row(n, hidden, repository, issue, owner, now) do
    {job, link} = {Ecto.UUID.generate(), Ecto.UUID.generate()}
    revoked? = n <= hidden and rem(n, 2) == 1

    %{
      job: %{
        id: job,
        kind: "work",
        status: "completed",
        report: @report,
        inserted_at: now,
        updated_at: now
      },
      link:
        revoked? &&
          %{
            id: link,
            account_id: owner.id,
            repository_id: repository.id,
            artifact_type: "attempt",
            artifact_ref: link,
            tier: "ledger",
            consent: %{},
            revoked_at: now,
            inserted_at: now
          },
      attempt: %{
        id: Ecto.UUID.generate(),
        repository_id: repository.id,
        issue_id: issue.id,
        target_kind: "box",
        requesting_principal: %{"type" => "user", "id" => owner.id},
        state: "completed",
        transparency_tier: if(n <= hidden, do: "dark", else: "pulse"),
        artifact_link_id: if(revoked?, do: link),
        work_job_id: job,
        inserted_at: DateTime.add(%{now | microsecond: {0, 6}}, n, :microsecond),
        updated_at: %{now | microsecond: {0, 6}}
      }
    }
  end

  defp base(issue),
    do:
      from(a in Assignment,
        where: a.issue_id == ^issue.id,
        order_by: [asc: a.inserted_at, asc: a.id]
      )

  # The app's way: every attempt read with its preloads, the dark ones dropped.
  def all_then_drop(issue, viewer), do: issue |> all(viewer) |> drop_dark(viewer)

  def all(issue, _viewer),
    do: issue |> base() |> preload([:work_job, :artifact_link]) |> Repo.all()

  def drop_dark(attempts, viewer),
    do: Enum.reject(attempts, &(WorkDisclosure.effective_tier(&1, viewer) == :dark))

  def where_visible(issue, viewer) do
    issue
    |> base()
    |> WorkDisclosure.where_visible(viewer)
    |> preload([a, ..., l], [:work_job, artifact_link: l])
    |> Repo.all()
  end

  # Rows PostgreSQL returns to a way (every query: attempts, then the
  # preloads), and the report bytes it ends up holding.
  def read(way, issue, viewer) do
    id = "listing-#{System.unique_integer([:positive])}"
    event = Repo.config()[:telemetry_prefix] ++ [:query]
    count = fn _event, _measured, %{result: result}, me -> if self() == me, do: add(result) end
    :ok = :telemetry.attach(id, event, count, self())
    Process.put(:rows, 0)
    attempts = way.(issue, viewer)
    :telemetry.detach(id)
    bytes = attempts |> Enum.map(&byte_size(&1.work_job.report || "")) |> Enum.sum()
    {attempts, Process.delete(:rows), bytes}
  end

  defp add({:ok, %{num_rows: rows}}), do: Process.put(:rows, Process.get(:rows) + rows)
  defp add(_error), do: :ok

  def time(runs, fun) do
    for(_ <- 1..runs, do: fun |> :timer.tc() |> elem(0)) |> Harness.median()
  end
end

alias Bench.{Harness, HostListing}

repository = HostListing.start!()
viewer = OpenAgents.Transparency.WorkDisclosure.viewer(repository, nil)

sizes =
  System.get_env("LISTING_SIZES", "3000,30000")
  |> String.split(",")
  |> Enum.map(&String.to_integer/1)

runs = Harness.env_int("LISTING_RUNS", 5)

rows =
  for hidden <- sizes do
    issue = HostListing.issue!(repository, hidden)
    {loaded, all_rows, all_bytes} = HostListing.read(&HostListing.all/2, issue, viewer)
    all = HostListing.drop_dark(loaded, viewer)
    {ours, our_rows, our_bytes} = HostListing.read(&HostListing.where_visible/2, issue, viewer)
    same? = Enum.map(all, & &1.id) == Enum.map(ours, & &1.id)
    unless same?, do: raise("the two ways disagree at #{hidden} hidden attempts")
    slow = HostListing.time(runs, fn -> HostListing.all_then_drop(issue, viewer) end)
    fast = HostListing.time(runs, fn -> HostListing.where_visible(issue, viewer) end)

    [
      "#{hidden}",
      "#{length(ours)}",
      "#{Harness.ns(slow / 1000)} ms (#{all_rows} rows, #{div(all_bytes, 1024)} KB of reports)",
      "#{Harness.ns(fast / 1000)} ms (#{our_rows} rows, #{div(our_bytes, 1024)} KB of reports)",
      "#{Harness.ratio(slow / fast)}×"
    ]
  end

load = Harness.loadavg()
IO.puts("## An anonymous reader's listing of one issue (#{Harness.revision()})\n")
IO.puts("#{runs} runs each, median; load average at the end #{load}\n")

header = ["hidden attempts", "shown", "all, then drop the dark", "where_visible/2", "faster"]
Harness.table(header, rows, [0, 1, 4])
