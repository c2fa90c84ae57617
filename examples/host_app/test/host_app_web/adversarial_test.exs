defmodule HostAppWeb.AdversarialTest do
  @moduledoc """
  Every route, for every reader, read as an attacker would: revoked and dark
  records, links not loaded, other users' links, forged and odd Bearer
  tokens, ids that are malformed, of another repository or far out of range,
  oversized bodies and pages.

  Every answer is held to three things: no status of 500 or above; no
  `SECRET` (every never-listed text column of the world holds it) in any
  byte, nor any never-listed id; and no record above its tier. The tier each
  record must be shown at is computed from the database as the request
  finds it: what the library decides (`WorkDisclosure.effective_tier/2` of the
  record, for the descriptor of the reader's relationship to the record's own
  repository, `HostApp.DataCase.descriptor/2`), and the fields
  each record may carry are the library's schedule at that tier
  (`WorkDisclosure.fields_at/2`). A record dark to the reader, revoked or by
  its tier, appears nowhere: not its id, nor its work job's, evidence's or
  traces' ids, not even as a page's `next`.

  Links not loaded: this suite runs with `unloaded_link: :raise`
  (config/test.exs), so a route that read a record without its link would
  answer 500 here; `?preload=false` is sent and changes nothing.
  """
  use HostAppWeb.ConnCase, async: true

  import Ecto.Query
  alias HostApp.Attempts
  alias OpenAgents.Forge.{Assignment, Issue, IssueEvidence}
  alias OpenAgents.Repositories.{Membership, Repository}
  alias OpenAgents.Traces.Trace
  alias OpenAgents.Transparency.{ArtifactLink, WorkDisclosure}
  alias OpenAgents.Work.Job

  setup :seeded
  setup :hostile_world

  @slugs ["acme-widgets", "other-repo"]

  # ── the world, made worse ──────────────────────────────────────────────

  # Beyond the seeds: an agent's attempt whose tier column is dark, with a
  # job, evidence and trace; another repository where the stranger is the
  # member, with the stranger's attempt and a revoked one; the member's
  # attempt, revoked by the member; evidence under other users' links (a
  # revoked one and a live one); a private trace.
  defp hostile_world(ctx) do
    %{world: world, readers: r} = ctx
    [first, _revoked, agent | _] = ctx.attempts

    dark = copy_attempt(agent, world.repository, "dark", 10)

    other = Repo.insert!(%Repository{slug: "other-repo", name: "Other SECRET-name"})
    Repo.insert!(%Issue{repository_id: other.id, number: 1, title: "SECRET-other-issue"})
    Repo.insert!(%Membership{repository_id: other.id, user_id: r.stranger.id})
    {:ok, foreign} = Attempts.create(other, r.stranger, %{issue_number: 1, target_kind: "box"})
    {:ok, gone} = Attempts.create(other, r.stranger, %{issue_number: 1, target_kind: "computer"})
    {:ok, _} = Attempts.stamp(gone.artifact_link.id, %{"reason" => "SECRET-gone"})

    {:ok, mine} =
      Attempts.create(world.repository, r.member, %{issue_number: 1, target_kind: "box"})

    {:ok, _} = Attempts.stamp(mine.artifact_link.id, %{"reason" => "SECRET-mine"})

    edge = Repo.one!(from e in IssueEvidence, where: e.assignment_id == ^agent.id)
    copy(IssueEvidence, edge, %{artifact_link_id: mine.artifact_link.id})

    copy(IssueEvidence, edge, %{
      artifact_link_id: first.artifact_link.id,
      transparency_tier: "glass"
    })

    trace = Repo.one!(from t in Trace, where: t.assignment_id == ^first.id)
    copy(Trace, trace, %{visibility: "private", digest: "sha256:SECRET-private"})

    %{extra: %{dark: dark, other: other, foreign: foreign, gone: gone, mine: mine}}
  end

  defp copy(schema, record, changes) do
    fields = schema.__schema__(:fields) -- [:id]
    attrs = record |> Map.from_struct() |> Map.take(fields) |> Map.merge(changes)
    Repo.insert!(struct(schema, attrs))
  end

  defp copy_attempt(attempt, repository, tier, hours) do
    job = copy(Job, Repo.get!(Job, attempt.work_job_id), %{})
    at = DateTime.add(attempt.inserted_at, hours * 3600)

    dark =
      copy(Assignment, attempt, %{
        repository_id: repository.id,
        transparency_tier: tier,
        work_job_id: job.id,
        artifact_link_id: nil,
        inserted_at: at,
        updated_at: at
      })

    for edge <- Repo.all(from e in IssueEvidence, where: e.assignment_id == ^attempt.id),
        do: copy(IssueEvidence, edge, %{assignment_id: dark.id, transparency_tier: tier})

    for trace <- Repo.all(from t in Trace, where: t.assignment_id == ^attempt.id),
        do: copy(Trace, trace, %{assignment_id: dark.id})

    dark
  end

  # ── what each reader may see, from the database as it is now ───────────

  defp truth do
    memberships = Repo.all(from m in Membership, select: {m.repository_id, m.user_id})

    attempts =
      Repo.all(from a in Assignment, order_by: [asc: a.inserted_at, asc: a.id])
      |> Repo.preload([:artifact_link, :repository])

    evidence = Repo.all(from e in IssueEvidence, preload: :artifact_link)
    traces = Repo.all(from t in Trace, select: map(t, [:id, :assignment_id, :visibility]))

    %{
      members: MapSet.new(memberships),
      attempts: attempts,
      by_id: Map.new(attempts, &{&1.id, &1}),
      evidence: Map.new(evidence, &{&1.id, &1}),
      evidence_of: Enum.group_by(evidence, & &1.assignment_id),
      traces_of: Enum.group_by(traces, & &1.assignment_id)
    }
  end

  # The reader's relationship to a repository, as viewer/2 draws it.
  defp role(_truth, :anonymous, _user, _repository_id), do: :anonymous
  defp role(_truth, :operator, _user, _repository_id), do: :operator

  defp role(truth, _reader, user, repository_id),
    do: if(MapSet.member?(truth.members, {repository_id, user.id}), do: :member, else: :stranger)

  defp tier_of(truth, reader, user, record) do
    role = role(truth, reader, user, record.repository_id)
    WorkDisclosure.effective_tier(record, descriptor(role, user))
  end

  # Every id the reader may not see: of attempts dark to them and of their
  # work jobs, evidence and traces; of evidence dark to them; of private traces.
  defp unseen_ids(truth, reader, user) do
    Enum.flat_map(truth.attempts, fn attempt ->
      if tier_of(truth, reader, user, attempt) == :dark do
        [attempt.id, attempt.work_job_id] ++
          Enum.map(Map.get(truth.evidence_of, attempt.id, []), & &1.id) ++
          Enum.map(Map.get(truth.traces_of, attempt.id, []), & &1.id)
      else
        dark_edges =
          for e <- Map.get(truth.evidence_of, attempt.id, []),
              tier_of(truth, reader, user, e) == :dark,
              do: e.id

        private =
          for t <- Map.get(truth.traces_of, attempt.id, []), t.visibility == "private", do: t.id

        dark_edges ++ private
      end
    end)
    |> Enum.reject(&is_nil/1)
  end

  defp visible_ids(truth, reader, user, slug) do
    for a <- truth.attempts,
        a.repository.slug == slug,
        tier_of(truth, reader, user, a) != :dark,
        do: a.id
  end

  # ── requests ───────────────────────────────────────────────────────────

  # {status, raw body} of a request with the given authorization header
  # values (none: anonymous), whether the route answered or raised and
  # Phoenix rendered the error.
  defp call(method, path, authorization, body \\ nil) do
    conn =
      Enum.reduce(List.wrap(authorization), Phoenix.ConnTest.build_conn(), fn value, conn ->
        %{conn | req_headers: conn.req_headers ++ [{"authorization", value}]}
      end)

    conn =
      if body, do: Plug.Conn.put_req_header(conn, "content-type", "application/json"), else: conn

    # The test adapter tells this process of every response it sends; only
    # this request's may be read below.
    flush_sent()

    try do
      conn = Phoenix.ConnTest.dispatch(conn, @endpoint, method, path, body)
      {conn.status, conn.resp_body}
    rescue
      error ->
        receive do
          {ref, {status, _headers, sent}} when is_reference(ref) -> {status, sent}
        after
          0 -> flunk("#{method} #{path} raised with nothing sent: #{inspect(error)}")
        end
    end
  end

  defp flush_sent do
    receive do
      {ref, {_status, _headers, _body}} when is_reference(ref) -> flush_sent()
    after
      0 -> :ok
    end
  end

  defp auth(nil), do: nil
  defp auth(user), do: "Bearer " <> user.handle

  # The three promises, for one answer to `reader` (`user` its struct).
  defp judge({status, raw} = answer, ctx, reader, what) do
    user = ctx.readers[reader]
    truth = truth()
    assert status < 500, "#{what} as #{reader}: #{status} #{String.slice(raw, 0, 300)}"
    refute raw =~ "SECRET", "#{what} as #{reader}: #{String.slice(raw, 0, 300)}"

    for id <- unseen_ids(truth, reader, user),
        do: refute(raw =~ id, "#{what} as #{reader} carries #{id}, dark to them")

    assert {:ok, body} = Jason.decode(raw), "#{what}: not JSON: #{String.slice(raw, 0, 200)}"
    check_items(body, truth, reader, user, what)
    answer
  end

  # Every item anywhere in a body: at exactly its record's tier for the
  # reader, never dark, each record with exactly the schedule's fields.
  defp check_items(%{"attempt" => attempt, "tier" => tier} = item, truth, reader, user, what) do
    record = Map.fetch!(truth.by_id, attempt["id"])
    expected = tier_of(truth, reader, user, record)
    assert expected != :dark, "#{what}: #{reader} was shown #{record.id}, dark to them"
    assert tier == Atom.to_string(expected), "#{what}: #{record.id} at #{tier}, not #{expected}"
    assert keys(attempt) == fields(:attempt, expected)
    if item["work_job"], do: assert(keys(item["work_job"]) == fields(:work_job, expected))

    for edge <- item["evidence"] || [] do
      edge_tier = tier_of(truth, reader, user, Map.fetch!(truth.evidence, edge["id"]))
      assert edge_tier != :dark
      assert keys(edge) == fields(:evidence, edge_tier)
    end

    for trace <- item["traces"] || [], do: assert(keys(trace) == fields(:trace, expected))
  end

  defp check_items(%{} = map, truth, reader, user, what),
    do: Enum.each(map, fn {_k, v} -> check_items(v, truth, reader, user, what) end)

  defp check_items(list, truth, reader, user, what) when is_list(list),
    do: Enum.each(list, &check_items(&1, truth, reader, user, what))

  defp check_items(_scalar, _truth, _reader, _user, _what), do: :ok

  defp keys(map), do: map |> Map.keys() |> Enum.sort()
  defp fields(family, tier), do: WorkDisclosure.fields_at(family, tier) |> Enum.map(&to_string/1)

  defp request(ctx, reader, method, path, body \\ nil),
    do:
      call(method, path, auth(ctx.readers[reader]), body)
      |> judge(ctx, reader, "#{method} #{path}")

  # Ids no route may answer with a record: malformed, out of range, of nothing.
  @odd_ids [
    "nope",
    "0",
    "-1",
    "99999999999999999999999999999999",
    "00000000-0000-0000-0000-000000000000",
    "ffffffff-ffff-ffff-ffff-ffffffffffff",
    "%00",
    "..%2F..%2Fetc%2Fpasswd",
    "%27%20OR%201%3D1--",
    String.duplicate("a", 8_000)
  ]

  # ── the routes ─────────────────────────────────────────────────────────

  test "GET /api/repositories/:slug/attempts: every page, every reader, every odd query", ctx do
    for reader <- readers(), slug <- @slugs do
      path = "/api/repositories/#{slug}/attempts"

      for query <- [
            "",
            "?preload=false",
            "?limit=1",
            "?limit=200",
            "?limit=201",
            "?limit=1000000000",
            "?limit=-5",
            "?limit=ab",
            "?after=nope",
            "?after=#{ctx.extra.foreign.id}",
            "?after=#{ctx.extra.mine.id}",
            "?after=#{ctx.extra.dark.id}",
            "?after=" <> String.duplicate("f", 10_000),
            "?limit[]=1",
            "?after[x]=1"
          ] do
        {status, raw} = request(ctx, reader, "GET", path <> query)
        assert status in [200, 400], "#{path}#{query}: #{status}"
        if status == 200, do: assert(length(Jason.decode!(raw)["data"]) <= 200)
      end

      # Walking the pages gives exactly what the reader may see, oldest first.
      shown = walk(ctx, reader, path, nil, [])
      assert shown == visible_ids(truth(), reader, ctx.readers[reader], slug)
    end

    for slug <- ["nope", "", "%00", String.duplicate("s", 5_000)] do
      {status, _} = request(ctx, :anonymous, "GET", "/api/repositories/#{slug}/attempts")
      assert status == 404
    end
  end

  defp walk(ctx, reader, path, after_id, acc) do
    query = "?limit=2" <> if(after_id, do: "&after=#{after_id}", else: "")
    {200, raw} = request(ctx, reader, "GET", path <> query)
    %{"data" => items, "next" => next} = Jason.decode!(raw)
    acc = acc ++ Enum.map(items, & &1["attempt"]["id"])
    if next, do: walk(ctx, reader, path, next, acc), else: acc
  end

  test "an oversized page is bounded: 200 at most, the rest behind next", ctx do
    for _ <- 1..205,
        do:
          Attempts.create(ctx.world.repository, ctx.readers.member, %{
            issue_number: 1,
            target_kind: "box"
          })

    for reader <- readers() do
      {200, raw} =
        request(ctx, reader, "GET", "/api/repositories/acme-widgets/attempts?limit=200")

      %{"data" => items, "next" => next} = Jason.decode!(raw)
      assert length(items) == 200
      assert next == List.last(items)["attempt"]["id"]
      {200, raw} = request(ctx, reader, "GET", "/api/repositories/acme-widgets/attempts")
      assert length(Jason.decode!(raw)["data"]) == 50
    end
  end

  test "GET /api/attempts/:id: every attempt of every repository, and odd ids", ctx do
    ids = Enum.map(truth().attempts, & &1.id) ++ @odd_ids

    for reader <- readers(), id <- ids do
      {status, _} = request(ctx, reader, "GET", "/api/attempts/#{id}")
      user = ctx.readers[reader]
      truth = truth()

      expected =
        case truth.by_id[id] do
          nil -> 404
          record -> if tier_of(truth, reader, user, record) == :dark, do: 404, else: 200
        end

      assert status == expected, "#{reader} GET /api/attempts/#{String.slice(id, 0, 40)}"
    end
  end

  test "GET /api/delegations/:id: every job, and odd ids", ctx do
    truth = truth()
    jobs = truth.attempts |> Enum.map(& &1.work_job_id) |> Enum.reject(&is_nil/1) |> Enum.uniq()

    for reader <- readers(), id <- jobs ++ @odd_ids do
      {status, _} = request(ctx, reader, "GET", "/api/delegations/#{id}")
      user = ctx.readers[reader]

      expected =
        case Enum.find(truth.attempts, &(&1.work_job_id == id)) do
          nil -> 404
          oldest -> if tier_of(truth, reader, user, oldest) == :dark, do: 404, else: 200
        end

      assert status == expected, "#{reader} GET /api/delegations/#{String.slice(id, 0, 40)}"
    end
  end

  test "GET /api/targets: every reader", ctx do
    for reader <- readers() do
      {status, raw} = call("GET", "/api/targets", auth(ctx.readers[reader]))
      assert status == if(reader == :anonymous, do: 401, else: 200)
      refute raw =~ "SECRET"
      assert {:ok, _} = Jason.decode(raw)
    end
  end

  test "POST /api/repositories/:slug/attempts: every reader, every odd body", ctx do
    huge = Jason.encode!(%{issue_number: 1, target_kind: String.duplicate("x", 9_000_000)})
    deep = String.duplicate("[", 5_000) <> String.duplicate("]", 5_000)

    bodies = [
      {:valid, Jason.encode!(%{issue_number: 1, target_kind: "box"})},
      {:bad, Jason.encode!(%{issue_number: 2, target_kind: "box"})},
      {:bad, Jason.encode!(%{issue_number: 99_999_999_999_999_999_999, target_kind: "box"})},
      {:valid,
       Jason.encode!(%{
         issue_number: 1,
         target_kind: "box",
         transparency_tier: "glass",
         artifact_link_id: Ecto.UUID.generate(),
         repository_id: ctx.extra.other.id
       })},
      {:bad, ~s({"issue_number": {"$gt": 0}, "target_kind": ["box"]})},
      {:bad, "[]"},
      {:bad, "null"},
      {:bad, deep},
      # Refused by the body parser, before anyone is asked who is reading.
      {:unparsable, "{not json"},
      {:unparsable, huge}
    ]

    for reader <- readers(), slug <- @slugs, {kind, body} <- bodies do
      path = "/api/repositories/#{slug}/attempts"
      {status, raw} = request(ctx, reader, "POST", path, body)
      user = ctx.readers[reader]
      repository = Repo.get_by!(Repository, slug: slug)
      may? = reader == :operator or role(truth(), reader, user, repository.id) == :member

      cond do
        kind == :unparsable ->
          assert status in [400, 413]

        reader == :anonymous ->
          assert status == 401

        not may? ->
          assert status == 403, "#{reader} POST #{slug} #{String.slice(body, 0, 60)}: #{status}"

        kind == :valid ->
          assert status == 201

        true ->
          assert status in [400, 413, 422],
                 "#{reader} #{slug} #{String.slice(body, 0, 80)}: #{status}"
      end

      if status == 201 do
        # The extra keys of the body changed nothing: the attempt is in this
        # repository, at the host's tier column, with its own link.
        id = Jason.decode!(raw)["data"]["attempt"]["id"]
        attempt = Repo.get!(Assignment, id) |> Repo.preload(:artifact_link)
        assert attempt.repository_id == repository.id
        assert attempt.transparency_tier == "ledger"
        assert attempt.artifact_link.account_id == user.id
      end
    end
  end

  test "POST /api/links/:id/revoke: every reader on every link, others' and revoked ones", ctx do
    links = Repo.all(from l in ArtifactLink, select: l.id, order_by: l.inserted_at)

    for reader <- readers(), id <- links ++ @odd_ids do
      user = ctx.readers[reader]
      link = if match?({:ok, _}, Ecto.UUID.cast(id)), do: Repo.get(ArtifactLink, id)
      {status, _raw} = request(ctx, reader, "POST", "/api/links/#{id}/revoke", "{}")

      expected =
        cond do
          reader == :anonymous -> 401
          link == nil -> 404
          link.account_id != user.id and reader != :operator -> 403
          link.revoked_at != nil -> 409
          true -> 200
        end

      assert status == expected, "#{reader} revoking #{String.slice(id, 0, 40)}"
    end

    # Every link revoked: every attempt a link governed is gone for everyone.
    for reader <- readers(), slug <- @slugs do
      {200, raw} = request(ctx, reader, "GET", "/api/repositories/#{slug}/attempts?limit=200")

      for item <- Jason.decode!(raw)["data"],
          do: assert(truth().by_id[item["attempt"]["id"]].artifact_link_id == nil)
    end
  end

  test "forged and odd Bearer tokens are 401 on every route, and say nothing more", ctx do
    attempt = hd(ctx.attempts)

    tokens = [
      "",
      "Bearer",
      "Bearer ",
      "bearer operator",
      "BEARER operator",
      "Basic b3BlcmF0b3I6b3BlcmF0b3I=",
      "Bearer operator\u0000",
      "Bearer " <> ctx.readers.operator.id,
      "Bearer %",
      "Bearer ' OR '1'='1",
      "Bearer SECRET",
      "Bearer " <> String.duplicate("o", 100_000),
      "Bearer \xff\xfe",
      "Token operator",
      ["Bearer operator", "Bearer stranger"]
    ]

    routes = [
      {"GET", "/api/targets", nil},
      {"GET", "/api/delegations/#{attempt.work_job_id}", nil},
      {"GET", "/api/repositories/acme-widgets/attempts", nil},
      {"GET", "/api/attempts/#{attempt.id}", nil},
      {"POST", "/api/repositories/acme-widgets/attempts",
       ~s({"issue_number":1,"target_kind":"box"})},
      {"POST", "/api/links/#{attempt.artifact_link.id}/revoke", "{}"}
    ]

    for token <- tokens, {method, path, body} <- routes do
      {status, raw} = call(method, path, token, body)

      assert status == 401,
             "#{inspect(String.slice(inspect(token), 0, 60))} #{method} #{path}: #{status}"

      assert Jason.decode!(raw) == %{"errors" => %{"detail" => "Unauthorized"}}
    end

    assert Repo.get!(ArtifactLink, attempt.artifact_link.id).revoked_at == nil
  end
end
