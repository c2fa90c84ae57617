defmodule HostAppWeb.AttemptShowTest do
  @moduledoc "GET /api/attempts/:id: the item plus its evidence and traces, each at its own tier."
  use HostAppWeb.ConnCase, async: true

  alias OpenAgents.Traces.Trace

  setup :seeded

  defp show(ctx, reader, id), do: request_as(ctx.readers[reader], :get, "/api/attempts/#{id}")

  test "each reader gets the item, its evidence and its trace at the tiers the rules give", ctx do
    for reader <- readers(), attempt <- ctx.attempts do
      tier = decided_tier(ctx.readers, reader, attempt)

      conn = show(ctx, reader, attempt.id)

      if tier == :dark do
        assert json!(conn, 404) == %{"errors" => %{"detail" => "Not Found"}}
      else
        %{"data" => data} = json!(conn, 200)
        assert Enum.sort(Map.keys(data)) == ~w(attempt evidence tier traces work_job)
        assert data["tier"] == Atom.to_string(tier)
        assert data["attempt"]["id"] == attempt.id
        assert Enum.sort(Map.keys(data["attempt"])) == field_names(:attempt, tier)

        # The seeded evidence row shares its attempt's link and tier column.
        assert [edge] = data["evidence"]
        assert Enum.sort(Map.keys(edge)) == field_names(:evidence, tier)
        # The trace is read at its attempt's tier.
        assert [trace] = data["traces"]
        assert Enum.sort(Map.keys(trace)) == field_names(:trace, tier)
        assert trace["schema_version"] == "ATIF-v1.7"
        assert trace["step_count"] == 3
      end
    end
  end

  test "a dark attempt answers 404 exactly as a missing or malformed id does", ctx do
    [_, revoked | _] = ctx.attempts
    missing = Ecto.UUID.generate()

    bodies =
      for reader <- readers(), id <- [revoked.id, missing, "not-a-uuid", "1"] do
        conn = show(ctx, reader, id)
        {conn.status, conn.resp_body}
      end

    assert Enum.uniq(bodies) == [{404, ~s({"errors":{"detail":"Not Found"}})}]
  end

  test "evidence carries commit and receipt from the ledger up, never the actor", ctx do
    [linked | _] = ctx.attempts

    for reader <- [:member, :owner, :operator] do
      %{"data" => %{"evidence" => [edge]}} = show(ctx, reader, linked.id) |> json!(200)
      assert edge["commit"] == String.duplicate("1f", 20)
      assert edge["receipt_id"] == "rcpt_1"
      refute Map.has_key?(edge, "actor")
    end

    for reader <- [:anonymous, :stranger] do
      %{"data" => %{"evidence" => [edge]}} = show(ctx, reader, linked.id) |> json!(200)
      assert Enum.sort(Map.keys(edge)) == field_names(:evidence, :pulse)
    end
  end

  test "a private trace is listed to nobody; the document never is", ctx do
    [linked | _] = ctx.attempts

    Repo.insert!(%Trace{
      user_id: ctx.readers.owner.id,
      digest: "sha256:private",
      visibility: "private",
      document: %{"schema_version" => "ATIF-v1.7", "steps" => []},
      byte_size: 10,
      assignment_id: linked.id
    })

    for reader <- readers() do
      conn = show(ctx, reader, linked.id)
      %{"data" => %{"traces" => traces}} = json!(conn, 200)
      assert length(traces) == 1
      refute conn.resp_body =~ "sha256:private"
      refute conn.resp_body =~ "steps"
      for id <- hidden_ids(ctx.world, ctx.attempts), do: refute(conn.resp_body =~ id)
    end
  end

  test "show reads only the trace columns it projects: never the document, never the uploader",
       ctx do
    [linked | _] = ctx.attempts
    handler = "trace-columns-#{inspect(self())}"
    parent = self()

    :telemetry.attach(
      handler,
      [:open_agents, :repo, :query],
      fn _event, _measures, %{query: sql}, _ -> send(parent, {:sql, sql}) end,
      nil
    )

    try do
      json!(request_as(ctx.readers.operator, :get, "/api/attempts/#{linked.id}"), 200)
    after
      :telemetry.detach(handler)
    end

    traces_sql =
      Stream.repeatedly(fn ->
        receive do
          {:sql, sql} -> sql
        after
          0 -> nil
        end
      end)
      |> Enum.take_while(& &1)
      |> Enum.filter(&(&1 =~ ~s(FROM "traces")))

    assert [sql] = traces_sql
    # The document only as the two facts PostgreSQL reads out of it.
    refute sql =~ ~r/"document"(?!\s*->)/
    refute sql =~ "user_id"
    assert sql =~ ~s("document"->'schema_version')
  end
end
