defmodule HostAppWeb.AttemptsHiddenCostTest do
  @moduledoc """
  What a reader cannot see costs its request next to nothing: with 20,000
  attempts dark to an anonymous reader after its cursor, the page after its
  last visible attempt is answered well within a second and still finds the
  one visible attempt behind them. Rows whose tier column is no tier word
  (which no route writes) are the one kind the query cannot leave out: each
  is read and decided, in batches that grow, and that cost is printed and
  bounded too.
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

  # {the hidden rows' tier column, the bound in ms}: a tier word the query
  # leaves out; a value that is none, each row read and decided.
  for {tier, bound} <- [{"dark", 1_000}, {"GLASS", 10_000}] do
    @tag hidden_tier: tier, bound: bound
    test "anonymous ?limit=1 after its last visible attempt, 20,000 attempts #{tier} after it",
         ctx do
      started = System.monotonic_time(:microsecond)
      conn = request_as(nil, :get, @path <> "?limit=1&after=#{ctx.cursor}")
      ms = (System.monotonic_time(:microsecond) - started) / 1000

      IO.puts(
        "\n#{@hidden} attempts #{ctx.hidden_tier} after the cursor: anonymous ?limit=1 " <>
          "answered in #{Float.round(ms, 1)} ms"
      )

      assert %{"data" => [item], "next" => nil} = json!(conn, 200)
      assert item["attempt"]["id"] == ctx.behind
      assert item["tier"] == "pulse"
      assert ms < ctx.bound
    end
  end
end
