defmodule HostAppWeb.CreateAttemptTest do
  @moduledoc "POST /api/repositories/:slug/attempts: the attempt and its link in one transaction."
  use HostAppWeb.ConnCase, async: true

  alias OpenAgents.Forge.Assignment
  alias OpenAgents.Transparency.ArtifactLink

  setup :seeded

  @path "/api/repositories/acme-widgets/attempts"

  defp create(ctx, reader, body), do: request_as(ctx.readers[reader], :post, @path, body)
  defp count(schema), do: Repo.aggregate(schema, :count)

  test "a member's attempt is inserted with the link minted for it, and read back at glass",
       ctx do
    %{"data" => data} =
      create(ctx, :member, %{issue_number: 1, target_kind: "computer"}) |> json!(201)

    assert Enum.sort(Map.keys(data)) == ~w(attempt link tier work_job)
    assert data["tier"] == "glass"
    assert data["work_job"] == nil
    assert data["attempt"]["requester_kind"] == "user"
    assert data["attempt"]["state"] == "admitted"
    assert data["attempt"]["target_kind"] == "computer"

    attempt = Repo.get!(Assignment, data["attempt"]["id"]) |> Repo.preload(:artifact_link)
    link = attempt.artifact_link
    assert data["link"] == %{"id" => link.id, "tier" => "ledger"}
    assert link.account_id == ctx.readers.member.id
    assert link.repository_id == ctx.world.repository.id
    assert link.revoked_at == nil
    # Bound to the attempt it was minted for, in the same transaction.
    assert link.artifact_ref == attempt.id
    assert attempt.requesting_principal == %{"type" => "user", "id" => ctx.readers.member.id}

    # The requester reads it at glass through the link; a stranger at pulse.
    %{"data" => page} = request_as(ctx.readers.member, :get, @path) |> json!(200)
    assert List.last(page)["tier"] == "glass"
    %{"data" => page} = request_as(ctx.readers.stranger, :get, @path) |> json!(200)
    assert List.last(page)["tier"] == "pulse"
  end

  test "every new attempt is glass to its requester and to operators, and clamped for the rest",
       ctx do
    path = "/api/repositories/acme-widgets/attempts"

    for requester <- [:member, :operator] do
      %{"data" => %{"attempt" => %{"id" => id}, "tier" => "glass"}} =
        create(ctx, requester, %{issue_number: 1, target_kind: "box"}) |> json!(201)

      attempt = Repo.get!(Assignment, id) |> Repo.preload(:artifact_link)

      for reader <- readers() do
        %{"data" => items} = request_as(ctx.readers[reader], :get, path) |> json!(200)

        expected = decided_tier(ctx.readers, reader, attempt)

        assert Enum.find(items, &(&1["attempt"]["id"] == id))["tier"] == Atom.to_string(expected)
      end
    end
  end

  test "an anonymous reader gets 401 and nothing is written", ctx do
    before = {count(Assignment), count(ArtifactLink)}
    assert json!(create(ctx, :anonymous, %{issue_number: 1, target_kind: "box"}), 401)
    assert {count(Assignment), count(ArtifactLink)} == before
  end

  test "a user who is neither a member nor an operator gets 403, whatever the body", ctx do
    before = {count(Assignment), count(ArtifactLink)}

    # The owner of two seeded attempts is not a member of the repository.
    for reader <- [:stranger, :owner],
        body <- [%{issue_number: 1, target_kind: "box"}, %{issue_number: 999}, %{}, "[]"] do
      assert create(ctx, reader, body) |> json!(403) == %{"errors" => %{"detail" => "Forbidden"}}
    end

    assert {count(Assignment), count(ArtifactLink)} == before
  end

  test "when the attempt's insert fails both roll back: 422 naming the field sent", ctx do
    before = {count(Assignment), count(ArtifactLink)}

    # Not the column behind it (issue_id).
    assert create(ctx, :member, %{issue_number: 999, target_kind: "box"}) |> json!(422) ==
             %{"errors" => %{"issue_number" => ["does not exist"]}}

    assert {count(Assignment), count(ArtifactLink)} == before
  end

  test "when the link's insert fails (its unique index) nothing is kept: 422, no column named",
       ctx do
    # A link to the same artifact already exists: one minted and never bound.
    {:ok, _} =
      OpenAgents.Transparency.WorkDisclosure.link_for_attempt(
        ctx.world.repository,
        %{"type" => "user", "id" => ctx.readers.member.id}
      )

    before = {count(Assignment), count(ArtifactLink)}

    assert create(ctx, :member, %{issue_number: 1, target_kind: "box"}) |> json!(422) ==
             %{"errors" => %{"detail" => "Unprocessable Content"}}

    assert {count(Assignment), count(ArtifactLink)} == before
  end

  defmodule AccountsAway do
    @moduledoc false
    # The library's read of the viewer, failing as it does while PostgreSQL is away.
    def admin?(_user), do: raise(DBConnection.ConnectionError, "the viewer could not be read")
  end

  test "the viewer is read before the transaction: when that read fails, 503 and nothing kept",
       ctx do
    OpenAgentsPolicy.Host.override(accounts: AccountsAway)
    before = {count(Assignment), count(ArtifactLink)}
    body = %{issue_number: 1, target_kind: "box"}
    {503, _headers, body} = assert_error_sent(503, fn -> create(ctx, :member, body) end)
    assert Jason.decode!(body) == %{"errors" => %{"detail" => "Service Unavailable"}}
    assert {count(Assignment), count(ArtifactLink)} == before
  end

  test "bad input is a 4xx with a JSON error, never a 500", ctx do
    for {body, status} <- [
          {%{issue_number: "one", target_kind: "box"}, 422},
          {%{issue_number: 1, target_kind: "boat"}, 422},
          {%{issue_number: 1, target_kind: ["box"]}, 422},
          {%{issue_number: -1, target_kind: "box"}, 422},
          {%{issue_number: 2_147_483_648, target_kind: "box"}, 422},
          {%{issue_number: 1.5, target_kind: "box"}, 422},
          {%{target_kind: "box"}, 422},
          {%{}, 422},
          {~s([1, 2]), 422},
          {"", 422}
        ] do
      conn = create(ctx, :member, body)
      assert %{"errors" => errors} = json!(conn, status), inspect(body)
      assert map_size(errors) > 0
      # Only fields the body sent are named; otherwise the bare detail.
      sent = if is_map(body), do: Enum.map(Map.keys(body), &to_string/1), else: []
      assert (Map.keys(errors) -- sent) in [[], ["detail"]], inspect({body, errors})
      if Map.has_key?(errors, "detail"), do: assert(map_size(errors) == 1)
    end

    # A body that is not JSON is refused by the parser, rendered as JSON.
    {400, headers, body} = assert_error_sent(400, fn -> create(ctx, :member, "{not json") end)
    assert {"content-type", "application/json; charset=utf-8"} in headers
    assert Jason.decode!(body) == %{"errors" => %{"detail" => "Bad Request"}}

    assert json!(
             request_as(ctx.readers.member, :post, "/api/repositories/nope/attempts", %{
               issue_number: 1,
               target_kind: "box"
             }),
             404
           )
  end
end
