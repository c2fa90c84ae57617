defmodule HostApp.DisclosureTest do
  @moduledoc "`HostApp.Disclosure` on records loaded from PostgreSQL, below the routes."
  use HostApp.DataCase, async: true

  alias HostApp.{Attempts, Disclosure}
  alias OpenAgents.Forge.Assignment
  alias OpenAgents.Transparency.{ArtifactLink, WorkDisclosure}

  setup :seeded

  test "viewer/2 describes each reader from the database, once per request", ctx do
    %{readers: r, world: %{repository: repository}} = ctx

    assert Disclosure.viewer(repository, nil) == %{account_id: nil, tier: :pulse}
    assert Disclosure.viewer(repository, r.stranger) == %{account_id: r.stranger.id, tier: :pulse}
    assert Disclosure.viewer(repository, r.member) == %{account_id: r.member.id, tier: :ledger}
    # The owner requested attempts but is not a member.
    assert Disclosure.viewer(repository, r.owner) == %{account_id: r.owner.id, tier: :pulse}

    assert Disclosure.viewer(repository, r.operator) ==
             %{account_id: r.operator.id, tier: :glass, admin: true}

    # Asked of the database, not of the struct: a demotion counts at once.
    Repo.update!(Ecto.Changeset.change(r.operator, operator: false))
    assert Disclosure.viewer(repository, r.operator) == %{account_id: r.operator.id, tier: :pulse}
  end

  # No route reads an attempt without its link: these call the library
  # directly, on attempts loaded from the database without the preload.
  describe "an attempt loaded without its link (NotLoaded, artifact_link_id set or nil)" do
    defp unloaded(ctx) do
      for %{id: id} <- ctx.attempts do
        attempt = Repo.get!(Assignment, id) |> Repo.preload(:work_job)
        assert %Ecto.Association.NotLoaded{} = attempt.artifact_link
        attempt
      end
    end

    # The tier the library decides from the record's tier column alone (a
    # record with no link), for the reader's descriptor.
    defp column_tier(ctx, reader, attempt) do
      WorkDisclosure.effective_tier(
        %{transparency_tier: attempt.transparency_tier},
        descriptor(reader, ctx.readers[reader])
      )
    end

    defp tier_or_raise(attempt, viewer) do
      Disclosure.item(attempt, viewer)
    rescue
      error in ArgumentError -> {:raised, error.message}
    end

    test "this host's setting (:raise): a linked attempt raises, naming the preload", ctx do
      for attempt <- unloaded(ctx), reader <- readers() do
        viewer = Disclosure.viewer(ctx.world.repository, ctx.readers[reader])

        case attempt.artifact_link_id do
          nil ->
            # No link to load: the library decides as for a record without one.
            expected = column_tier(ctx, reader, attempt)
            assert Disclosure.item(attempt, viewer).tier == expected

          _linked ->
            assert {:raised, message} = tier_or_raise(attempt, viewer)
            assert message =~ "preload :artifact_link"
        end
      end
    end

    test ":tier_column (the seed's, the library's default): the tier column decides", ctx do
      OpenAgentsPolicy.Host.override(unloaded_link: :tier_column)

      for attempt <- unloaded(ctx), reader <- readers() do
        viewer = Disclosure.viewer(ctx.world.repository, ctx.readers[reader])

        assert Disclosure.item(attempt, viewer).tier == column_tier(ctx, reader, attempt)
      end
    end

    test ":dark (this host's prod): a linked attempt is left out for every reader", ctx do
      OpenAgentsPolicy.Host.override(unloaded_link: :dark)

      for attempt <- unloaded(ctx), reader <- readers() do
        viewer = Disclosure.viewer(ctx.world.repository, ctx.readers[reader])
        item = Disclosure.item(attempt, viewer)

        # A linked attempt is hidden; one with no link to load is shown, at the
        # tier its column gives the reader.
        if attempt.artifact_link_id,
          do: assert(item == nil),
          else: assert(item.tier == column_tier(ctx, reader, attempt))
      end
    end
  end

  test "a user struct carries no `admin` field: a stale copy cannot read as an operator", ctx do
    %{readers: r, world: %{repository: repository}} = ctx
    refute Map.has_key?(r.operator, :admin)
    [linked | _] = ctx.attempts

    # Demoted in the database; the struct loaded before the demotion is
    # handed to the library as the viewer itself.
    Repo.update!(Ecto.Changeset.change(r.operator, operator: false))
    assert OpenAgents.Transparency.WorkDisclosure.effective_tier(linked, r.operator) == :ledger
    assert Disclosure.viewer(repository, r.operator).tier == :pulse

    # What the library does with a map that says admin: true (the seeds'
    # rule, kept for parity): glass, whatever the host's admin?/1 says.
    assert OpenAgents.Transparency.WorkDisclosure.effective_tier(linked, %{admin: true}) == :glass
  end

  test "an attempt with no work job projects the attempt alone", ctx do
    [linked | _] = ctx.attempts
    viewer = Disclosure.viewer(ctx.world.repository, ctx.readers.member)
    item = Disclosure.item(%{linked | work_job: nil}, viewer)
    assert item.tier == :ledger
    assert item.work_job == nil
    assert item.attempt.id == linked.id
  end

  test "the ladder is monotone: pulse within ledger within glass", ctx do
    [linked | _] = ctx.attempts

    keys = fn reader ->
      item = Disclosure.item(linked, Disclosure.viewer(ctx.world.repository, ctx.readers[reader]))
      MapSet.new(Map.keys(item.attempt) ++ Enum.map(Map.keys(item.work_job), &{:job, &1}))
    end

    assert MapSet.subset?(keys.(:stranger), keys.(:member))
    assert MapSet.subset?(keys.(:member), keys.(:owner))
    assert MapSet.size(keys.(:stranger)) < MapSet.size(keys.(:member))
    assert MapSet.size(keys.(:member)) < MapSet.size(keys.(:owner))
    assert keys.(:anonymous) == keys.(:stranger)
    assert keys.(:owner) == keys.(:operator)
  end

  describe "WorkDisclosure.where_visible/2 on PostgreSQL" do
    # Every row shape: each tier word and words that are none (other case,
    # empty, unknown, longer than any word), with no link; and a live and a
    # revoked link of each user's account at each of those words, over a tier
    # column above and at dark.
    @words Enum.map(OpenAgents.Transparency.Ladder.tiers(), &Atom.to_string/1) ++
             ["GLASS", "", "bogus", String.duplicate("glass", 13)]

    defp every_shape(ctx) do
      [_, _, agent | _] = ctx.attempts
      users = ctx.readers |> Map.values() |> Enum.reject(&is_nil/1)
      now = DateTime.utc_now() |> DateTime.truncate(:second)
      links = for user <- users, revoked <- [nil, now], tier <- @words, do: {user, revoked, tier}

      for {column, link} <-
            Enum.map(@words, &{&1, nil}) ++ for(l <- links, c <- ["glass", "dark"], do: {c, l}) do
        link =
          with {user, revoked_at, tier} <- link do
            Repo.insert!(%ArtifactLink{
              account_id: user.id,
              repository_id: agent.repository_id,
              artifact_type: "attempt",
              artifact_ref: Ecto.UUID.generate(),
              tier: tier,
              consent: %{},
              revoked_at: revoked_at
            })
          end

        Repo.insert!(%Assignment{
          repository_id: agent.repository_id,
          issue_id: agent.issue_id,
          target_kind: "box",
          requesting_principal: agent.requesting_principal,
          state: "admitted",
          transparency_tier: column,
          artifact_link_id: link && link.id
        })
      end
    end

    test "for every row shape and viewer: the rows effective_tier/2 does not call dark", ctx do
      every_shape(ctx)
      repository = ctx.world.repository
      everything = Attempts.batch(repository, nil, 10_000)
      descriptors = for r <- readers(), do: Disclosure.viewer(repository, ctx.readers[r])

      # The five readers' descriptors, `nil` and `%{admin: true}`; then each
      # user struct itself, and accounts no link can hold.
      strays = [%{account_id: "not-an-account", tier: :ledger}, %{account_id: 7}]

      for viewer <- descriptors ++ [nil, %{admin: true}] ++ Map.values(ctx.readers) ++ strays do
        read = Attempts.batch(repository, nil, 10_000, viewer)
        seen = Enum.reject(everything, &(WorkDisclosure.effective_tier(&1, viewer) == :dark))

        assert Enum.map(read, & &1.id) == Enum.map(seen, & &1.id), inspect(viewer)

        assert Enum.all?(
                 read,
                 &(&1.artifact_link == nil or &1.artifact_link.id == &1.artifact_link_id)
               )
      end
    end
  end
end
