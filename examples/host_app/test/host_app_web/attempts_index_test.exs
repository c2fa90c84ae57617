defmodule HostAppWeb.AttemptsIndexTest do
  @moduledoc "GET /api/repositories/:slug/attempts on the seeded world, for the five readers."
  use HostAppWeb.ConnCase, async: true

  alias OpenAgentsPolicy.SeedRules

  setup :seeded

  @path "/api/repositories/acme-widgets/attempts"

  defp page(ctx, reader, query \\ "") do
    ctx.readers[reader] |> request_as(:get, @path <> query) |> json!(200) |> Map.fetch!("data")
  end

  # What upstream.md's rules give `reader` for each seeded attempt, with its
  # link as loaded (or :not_loaded); dark ones are left off the page.
  defp expected(ctx, reader, loaded?) do
    for attempt <- ctx.attempts,
        link = if(loaded?, do: attempt.artifact_link || :none, else: :not_loaded),
        tier =
          SeedRules.effective_tier(
            reader,
            reader_id(ctx.readers, reader),
            link,
            attempt.transparency_tier
          ),
        tier != :dark,
        do: {attempt, tier}
  end

  for reader <- [:anonymous, :stranger, :member, :owner, :operator] do
    @reader reader
    test "#{reader} reads each attempt at its tier, with exactly that tier's fields", ctx do
      items = page(ctx, @reader)
      expected = expected(ctx, @reader, true)

      assert Enum.map(items, &{&1["attempt"]["id"], &1["tier"]}) ==
               Enum.map(expected, fn {a, tier} -> {a.id, Atom.to_string(tier)} end)

      for {item, {attempt, tier}} <- Enum.zip(items, expected) do
        assert Enum.sort(Map.keys(item)) == ~w(attempt tier work_job)
        assert Enum.sort(Map.keys(item["attempt"])) == names(SeedRules.fields(:attempt, tier))
        assert Enum.sort(Map.keys(item["work_job"])) == names(SeedRules.fields(:work_job, tier))

        assert_values(item["attempt"], attempt,
          requester_kind: attempt.requesting_principal["type"]
        )

        assert_values(item["work_job"], attempt.work_job,
          budget:
            Map.take(
              attempt.work_job.budget_snapshot,
              ~w(wall_clock_seconds max_report_bytes max_prompt_bytes)
            )
        )
      end
    end
  end

  test "the seeded page, reader by reader: the tiers upstream's rules give", ctx do
    tiers = fn reader -> Enum.map(page(ctx, reader), & &1["tier"]) end

    assert tiers.(:anonymous) == ~w(pulse pulse pulse)
    assert tiers.(:stranger) == ~w(pulse pulse pulse)
    assert tiers.(:member) == ~w(ledger ledger pulse)
    assert tiers.(:owner) == ~w(glass pulse pulse)
    assert tiers.(:operator) == ~w(glass glass glass)
  end

  test "a revoked link is dark even to an operator: the attempt leaves every page", ctx do
    [_, revoked | _] = ctx.attempts
    assert revoked.artifact_link.revoked_at

    for reader <- readers() do
      refute revoked.id in Enum.map(page(ctx, reader), & &1["attempt"]["id"])
    end
  end

  test "?preload=false: the link is not loaded and the tier column decides", ctx do
    for reader <- readers() do
      items = page(ctx, reader, "?preload=false")
      expected = expected(ctx, reader, false)

      assert Enum.map(items, &{&1["attempt"]["id"], &1["tier"]}) ==
               Enum.map(expected, fn {a, tier} -> {a.id, Atom.to_string(tier)} end)
    end

    # The owner's live link no longer raises it; the revoked attempt shows at
    # its column (ledger) clamped, since nothing read the link.
    assert Enum.map(page(ctx, :owner, "?preload=false"), & &1["tier"]) ==
             ~w(pulse pulse pulse pulse)

    assert Enum.map(page(ctx, :member, "?preload=false"), & &1["tier"]) ==
             ~w(pulse ledger ledger pulse)
  end

  test "no never-listed value is in any response's bytes, under any name", ctx do
    hidden = hidden_ids(ctx.world, ctx.attempts)

    for reader <- readers(), query <- ["", "?preload=false"] do
      conn = request_as(ctx.readers[reader], :get, @path <> query)
      json!(conn, 200)
      for id <- hidden, do: refute(conn.resp_body =~ id, "#{reader} saw #{id}")
      refute conn.resp_body =~ "owner-laptop"
    end
  end

  test "a repository nobody has is 404; a bad ?preload is 400; an unknown handle is 401", ctx do
    assert %{"errors" => %{"detail" => "Not Found"}} =
             request_as(nil, :get, "/api/repositories/nope/attempts") |> json!(404)

    assert %{"errors" => _} = request_as(nil, :get, @path <> "?preload=maybe") |> json!(400)

    ghost = %{ctx.readers.stranger | handle: "ghost"}

    assert %{"errors" => %{"detail" => "Unauthorized"}} =
             request_as(ghost, :get, @path) |> json!(401)
  end

  test "attempts are listed oldest first, across issues", ctx do
    %{world: world} = ctx

    issues =
      for n <- 2..26 do
        Repo.insert!(%OpenAgents.Forge.Issue{
          repository_id: world.repository.id,
          number: n,
          title: "issue #{n}"
        })
      end

    # rem(n, 4) attempts on issue n: some issues have none.
    created =
      for issue <- issues, _ <- List.duplicate(:attempt, rem(issue.number, 4)) do
        {:ok, attempt} =
          HostApp.Attempts.create(world.repository, world.users.owner, %{
            issue_number: issue.number,
            target_kind: "box"
          })

        attempt.id
      end

    assert length(created) == Enum.sum(for n <- 2..26, do: rem(n, 4))
    ids = Enum.map(page(ctx, :member), & &1["attempt"]["id"])
    assert Enum.take(ids, -length(created)) == created
  end

  defp names(atoms), do: atoms |> Enum.map(&Atom.to_string/1) |> Enum.sort()

  # Each published value is the record's own, by field name (JSON-encoded).
  defp assert_values(published, record, computed) do
    for {field, value} <- published do
      key = String.to_existing_atom(field)
      source = Keyword.get_lazy(computed, key, fn -> Map.fetch!(record, key) end)
      assert value == source |> Jason.encode!() |> Jason.decode!(), "#{field}"
    end
  end
end
