defmodule HostAppWeb.AttemptsHiddenCostTest do
  @moduledoc """
  What a reader cannot see never hides what it can: with 20,000 attempts
  dark to an anonymous reader after its cursor, the page after its last
  visible attempt still finds the one visible attempt behind them, whether
  their tier column is a tier word or no word (which no route writes): the
  query leaves both out. What it costs is the bench's to measure, not a
  test's.
  """
  use HostAppWeb.ConnCase, async: false

  alias OpenAgents.Forge.Assignment

  setup :seeded

  @hidden 20_000
  @path "/api/repositories/acme-widgets/attempts"

  # The anonymous reader's last visible attempt (the cursor), then 20,000
  # attempts whose tier column is the test's `hidden_tier` after every
  # seeded one, then one at pulse after them.
  setup ctx do
    %{"data" => seen} = request_as(nil, :get, @path <> "?limit=200") |> json!(200)
    [_, _, agent | _] = ctx.attempts
    last = ctx.attempts |> Enum.map(& &1.inserted_at) |> Enum.max(DateTime)

    row = fn at, tier ->
      %{
        id: Ecto.UUID.generate(),
        repository_id: agent.repository_id,
        issue_id: agent.issue_id,
        target_kind: "box",
        requesting_principal: %{"type" => "agent", "id" => "hidden"},
        state: "admitted",
        transparency_tier: tier,
        inserted_at: DateTime.add(last, at, :millisecond),
        updated_at: DateTime.add(last, at, :millisecond)
      }
    end

    1..@hidden
    |> Enum.map(&row.(&1, ctx.hidden_tier))
    |> Enum.chunk_every(2_000)
    |> Enum.each(&Repo.insert_all(Assignment, &1))

    visible = row.(@hidden + 1, "pulse")
    Repo.insert_all(Assignment, [visible])
    %{cursor: List.last(seen)["attempt"]["id"], behind: visible.id}
  end

  # The hidden rows' tier column: a tier word, and a value that is none.
  for tier <- ["dark", "GLASS"] do
    @tag hidden_tier: tier
    test "anonymous ?limit=1 after its last visible attempt, 20,000 attempts #{tier} after it",
         ctx do
      conn = request_as(nil, :get, @path <> "?limit=1&after=#{ctx.cursor}")
      assert %{"data" => [item], "next" => nil} = json!(conn, 200)
      assert item["attempt"]["id"] == ctx.behind
      assert item["tier"] == "pulse"
    end
  end
end
