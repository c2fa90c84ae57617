defmodule HostAppWeb.AttemptsIndexTest do
  @moduledoc "GET /api/repositories/:slug/attempts on the seeded world, for the five readers."
  use HostAppWeb.ConnCase, async: true

  setup :seeded

  @path "/api/repositories/acme-widgets/attempts"

  defp page(ctx, reader, query \\ "") do
    ctx.readers[reader] |> request_as(:get, @path <> query) |> json!(200) |> Map.fetch!("data")
  end

  # The tier the library decides for `reader` on each seeded attempt, its
  # link loaded; dark ones are left off the page.
  defp expected(ctx, reader) do
    for attempt <- ctx.attempts,
        tier = decided_tier(ctx.readers, reader, attempt),
        tier != :dark,
        do: {attempt, tier}
  end

  for reader <- [:anonymous, :stranger, :member, :owner, :operator] do
    @reader reader
    test "#{reader} reads each attempt at its tier, with exactly that tier's fields", ctx do
      items = page(ctx, @reader)
      expected = expected(ctx, @reader)

      assert Enum.map(items, &{&1["attempt"]["id"], &1["tier"]}) ==
               Enum.map(expected, fn {a, tier} -> {a.id, Atom.to_string(tier)} end)

      for {item, {attempt, tier}} <- Enum.zip(items, expected) do
        assert Enum.sort(Map.keys(item)) == ~w(attempt tier work_job)
        assert Enum.sort(Map.keys(item["attempt"])) == field_names(:attempt, tier)
        assert Enum.sort(Map.keys(item["work_job"])) == field_names(:work_job, tier)

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

  test "no route decides without the link: ?preload=false is gone, the revoked attempt absent",
       ctx do
    [_, revoked | _] = ctx.attempts

    for reader <- readers(), query <- ["", "?preload=false", "?preload=maybe"] do
      items = page(ctx, reader, query)

      assert Enum.map(items, &{&1["attempt"]["id"], &1["tier"]}) ==
               Enum.map(expected(ctx, reader), fn {a, tier} ->
                 {a.id, Atom.to_string(tier)}
               end)

      refute revoked.id in Enum.map(items, & &1["attempt"]["id"])
      refute revoked.work_job.id in Enum.map(items, & &1["work_job"]["id"])
    end
  end

  test "no never-listed value is in any response's bytes, under any name", ctx do
    hidden = hidden_ids(ctx.world, ctx.attempts)

    for reader <- readers() do
      conn = request_as(ctx.readers[reader], :get, @path)
      json!(conn, 200)
      for id <- hidden, do: refute(conn.resp_body =~ id, "#{reader} saw #{id}")
      refute conn.resp_body =~ "owner-laptop"
    end
  end

  test "a repository nobody has is 404; a bad ?limit or ?after is 400; an unknown handle 401",
       ctx do
    assert %{"errors" => %{"detail" => "Not Found"}} =
             request_as(nil, :get, "/api/repositories/nope/attempts") |> json!(404)

    for limit <- ["0", "201", "-1", "x", "1.5", "", "50 "] do
      assert %{"errors" => %{"limit" => [_]}} =
               request_as(nil, :get, @path <> "?limit=" <> URI.encode_www_form(limit))
               |> json!(400)
    end

    ghost = %{ctx.readers.stranger | handle: "ghost"}

    assert %{"errors" => %{"detail" => "Unauthorized"}} =
             request_as(ghost, :get, @path) |> json!(401)
  end

  describe "pages" do
    # `count` more attempts by the member on issue 1, oldest first.
    defp more(ctx, count) do
      for _ <- 1..count//1 do
        {:ok, attempt} =
          HostApp.Attempts.create(ctx.world.repository, ctx.readers.member, %{
            issue_number: 1,
            target_kind: "box"
          })

        attempt.id
      end
    end

    defp body(ctx, reader, query),
      do: ctx.readers[reader] |> request_as(:get, @path <> query) |> json!(200)

    # Every page of `reader`'s list, following "next", at `limit`.
    defp walk(ctx, reader, limit, after_id \\ nil, acc \\ []) do
      query = "?limit=#{limit}" <> if(after_id, do: "&after=#{after_id}", else: "")
      %{"data" => items, "next" => next} = body(ctx, reader, query)
      assert length(items) <= limit
      if next, do: assert(length(items) == limit and next == List.last(items)["attempt"]["id"])
      acc = acc ++ [items]
      if next, do: walk(ctx, reader, limit, next, acc), else: acc
    end

    test "a page holds 50 by default, next is the cursor of the following page", ctx do
      created = more(ctx, 52)

      for reader <- readers() do
        whole = Enum.map(expected(ctx, reader), fn {a, _} -> a.id end) ++ created
        %{"data" => first, "next" => next} = body(ctx, reader, "")
        assert length(first) == 50
        assert Enum.map(first, & &1["attempt"]["id"]) == Enum.take(whole, 50)
        assert next == Enum.at(whole, 49)

        %{"data" => rest, "next" => nil} = body(ctx, reader, "?after=#{next}")
        assert Enum.map(rest, & &1["attempt"]["id"]) == Enum.drop(whole, 50)
      end
    end

    test "walking every page at any limit gives the whole list once, oldest first", ctx do
      created = more(ctx, 7)

      for reader <- readers(), limit <- [1, 2, 3, 10, 200] do
        whole = Enum.map(expected(ctx, reader), fn {a, _} -> a.id end) ++ created
        pages = walk(ctx, reader, limit)
        assert pages |> List.flatten() |> Enum.map(& &1["attempt"]["id"]) == whole
        # Dark attempts cost reads, never an empty page: only the last may be short.
        assert Enum.all?(Enum.drop(pages, -1), &(length(&1) == limit))
      end
    end

    test "a cursor the reader may not see, of another repository, or of nothing is 400", ctx do
      [_, revoked | _] = ctx.attempts

      other = Repo.insert!(%OpenAgents.Repositories.Repository{slug: "other", name: "Other"})

      issue =
        Repo.insert!(%OpenAgents.Forge.Issue{repository_id: other.id, number: 1, title: "x"})

      Repo.insert!(%OpenAgents.Repositories.Membership{
        repository_id: other.id,
        user_id: ctx.readers.member.id
      })

      {:ok, foreign} =
        HostApp.Attempts.create(other, ctx.readers.member, %{
          issue_number: issue.number,
          target_kind: "box"
        })

      for reader <- readers(),
          cursor <- [
            revoked.id,
            foreign.id,
            Ecto.UUID.generate(),
            "nope",
            "",
            String.duplicate("9", 5000)
          ] do
        assert %{"errors" => %{"after" => [_]}} =
                 request_as(
                   ctx.readers[reader],
                   :get,
                   @path <> "?after=" <> URI.encode_www_form(cursor)
                 )
                 |> json!(400)
      end
    end
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

  # Each published value is the record's own, by field name (JSON-encoded).
  defp assert_values(published, record, computed) do
    for {field, value} <- published do
      key = String.to_existing_atom(field)
      source = Keyword.get_lazy(computed, key, fn -> Map.fetch!(record, key) end)
      assert value == source |> Jason.encode!() |> Jason.decode!(), "#{field}"
    end
  end
end
