# What each reader may see: the database says who the readers are and what
# each attempt and evidence row carries (tier column, link); `expected/5` asks
# the library in this VM what those rows read at, so the fault runs hold the
# host's answers, through every fault, to the library's own.
defmodule Faults.Expected do
  @moduledoc false

  alias OpenAgents.Accounts.User
  alias OpenAgents.Transparency.{ArtifactLink, WorkDisclosure}

  @slug "acme-widgets"

  @sql """
  select json_build_object(
    'users', (select coalesce(json_agg(json_build_object('id', u.id, 'handle', u.handle,
        'admin', u.admin, 'member', exists(select 1 from repository_memberships m
        join repositories r on r.id = m.repository_id where m.user_id = u.id
        and r.slug = '#{@slug}'))), '[]') from users u),
    'attempts', (select coalesce(json_agg(json_build_object('id', a.id,
        'tier', a.transparency_tier, 'link', a.artifact_link_id, 'job', a.work_job_id,
        'at', to_char(a.inserted_at, 'YYYY-MM-DD"T"HH24:MI:SS.US'),
        'job_status', j.status)), '[]')
      from forge_assignments a join repositories r on r.id = a.repository_id
      left join work_jobs j on j.id = a.work_job_id where r.slug = '#{@slug}'),
    'links', (select coalesce(json_agg(json_build_object('id', l.id, 'account', l.account_id,
        'tier', l.tier, 'revoked', l.revoked_at is not null)), '[]') from artifact_links l),
    'evidence', (select coalesce(json_agg(json_build_object('id', e.id,
        'attempt', e.assignment_id, 'tier', e.transparency_tier, 'link', e.artifact_link_id)),
        '[]') from issue_evidence e),
    'traces', (select coalesce(json_agg(json_build_object('attempt', t.assignment_id,
        'visibility', t.visibility)), '[]') from traces t),
    'targets', (select coalesce(json_agg(x), '[]') from (
        select 'box' as kind, b.user_id as owner from conversation_boxes b
        union all select 'computer', m.user_id from machines m) x)
  )
  """

  @doc "Reads the database at `url` with psql: `{:ok, snapshot}` or `{:error, why}`."
  def read(url) do
    case System.cmd("psql", [url, "-X", "-At", "-v", "ON_ERROR_STOP=1", "-c", @sql],
           stderr_to_stdout: true
         ) do
      {out, 0} -> {:ok, snapshot(Jason.decode!(out))}
      {out, _} -> {:error, String.trim(out)}
    end
  end

  defp snapshot(raw) do
    by_id = fn rows -> Map.new(rows, &{&1["id"], &1}) end

    %{
      users: Map.new(raw["users"], &{&1["handle"], &1}),
      attempts: by_id.(raw["attempts"]),
      links: by_id.(raw["links"]),
      evidence: Enum.group_by(raw["evidence"], & &1["attempt"]),
      public_traces:
        raw["traces"]
        |> Enum.reject(&(&1["visibility"] == "private"))
        |> Enum.frequencies_by(& &1["attempt"]),
      targets: raw["targets"]
    }
  end

  # ── the library's rules, asked here ────────────────────────────────────

  @doc "The tier `reader` (a users row, or nil) reads a record at, given its link (or `:none`)."
  def tier(record_tier, link, reader) do
    repository = %{id: @slug}

    user =
      reader &&
        %User{
          id: reader["id"],
          admin: reader["admin"] == true,
          member_of: if(reader["member"], do: [@slug], else: [])
        }

    link = if link == :none, do: nil, else: struct(ArtifactLink, link)

    WorkDisclosure.effective_tier(
      %{transparency_tier: record_tier, artifact_link: link},
      WorkDisclosure.viewer(repository, user)
    )
  end

  @doc "A live link's tier for `reader`: glass to its account and to operators, else clamped."
  def live_tier(link, reader),
    do: tier(nil, %{account_id: link["account"], tier: link["tier"], revoked_at: nil}, reader)

  @doc """
  What `reader` may see of a record (an attempt or evidence row of the
  snapshot) requested at `sent` and answered at `answered` (monotonic µs):
  `{:exactly, tier}`, or `{:either, tier}` (that tier or dark) while a
  revoke of its link was in flight. `revokes` maps a link id to
  `{started, done}` as the load clients saw them; a link already revoked when
  the run began is in `revoked_before`.
  """
  def expected(record, reader, preload?, {snapshot, revoked_before, revoke_of}, {sent, answered}) do
    link = record["link"] && snapshot.links[record["link"]]

    cond do
      not preload? or link == nil ->
        {:exactly, tier(record["tier"], :none, reader)}

      MapSet.member?(revoked_before, link["id"]) ->
        {:exactly, :dark}

      true ->
        case revoke_of.(link["id"]) do
          {_, done} when done != nil and done < sent -> {:exactly, :dark}
          {started, _} when started < answered -> {:either, live_tier(link, reader)}
          _ -> {:exactly, live_tier(link, reader)}
        end
    end
  end
end
