defmodule HostAppWeb.AttemptsHiddenCostTest do
  @moduledoc """
  What a reader cannot see costs its request next to nothing: with 20,000
  attempts dark to an anonymous reader after its cursor, the page after its
  last visible attempt is answered well within a second, still finds the
  one visible attempt behind them, and an install started while that
  request is inside drains and runs. Rows whose tier column is no tier word
  (which no route writes) are the one kind the query cannot leave out: each
  is read and decided, in batches that grow, and that cost is printed and
  bounded too. Not async: it closes the one gate.
  """
  use HostAppWeb.ConnCase, async: false

  alias HostApp.Upgrade
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
    on_exit(fn -> Upgrade.reopen() end)
    %{cursor: List.last(seen)["attempt"]["id"], behind: visible.id}
  end

  @doc false
  # The test's first attempts query (its request's, inside the gate)
  # starts an install and waits until the install has closed the door.
  def start_install(_event, _measurements, %{source: "forge_assignments"}, test) do
    if self() == test and Process.put({__MODULE__, :install}, true) == nil do
      spawn(fn ->
        started = System.monotonic_time(:millisecond)
        result = Upgrade.closed(fn -> :installed end)
        send(test, {:install, result, System.monotonic_time(:millisecond) - started})
      end)

      await_closed()
    end
  end

  def start_install(_event, _measurements, _metadata, _config), do: :ok

  defp await_closed do
    unless Upgrade.state().closed do
      Process.sleep(1)
      await_closed()
    end
  end

  # {the hidden rows' tier column, the bound in ms}: a tier word the query
  # leaves out; a value that is none, each row read and decided, within the
  # drain's 15 s with room.
  for {tier, bound} <- [{"dark", 1_000}, {"GLASS", 10_000}] do
    @tag hidden_tier: tier, bound: bound
    test "anonymous ?limit=1 after its last visible attempt, 20,000 attempts #{tier} after it",
         ctx do
      event = OpenAgents.Repo.config()[:telemetry_prefix] ++ [:query]
      id = {__MODULE__, make_ref()}
      :ok = :telemetry.attach(id, event, &__MODULE__.start_install/4, self())
      on_exit(fn -> :telemetry.detach(id) end)

      started = System.monotonic_time(:microsecond)
      conn = request_as(nil, :get, @path <> "?limit=1&after=#{ctx.cursor}")
      ms = (System.monotonic_time(:microsecond) - started) / 1000
      :telemetry.detach(id)

      assert_receive {:install, result, install_ms}

      IO.puts(
        "\n#{@hidden} attempts #{ctx.hidden_tier} after the cursor: anonymous ?limit=1 " <>
          "answered in #{Float.round(ms, 1)} ms; the install started inside it: " <>
          "#{inspect(result)} after #{install_ms} ms"
      )

      assert %{"data" => [item], "next" => nil} = json!(conn, 200)
      assert item["attempt"]["id"] == ctx.behind
      assert item["tier"] == "pulse"
      assert result == {:ok, :installed}
      assert ms < ctx.bound
    end
  end
end
