defmodule HostApp.DisclosureTest do
  @moduledoc "`HostApp.Disclosure` on records loaded from PostgreSQL, below the routes."
  use HostApp.DataCase, async: true

  alias HostApp.{Disclosure}
  alias OpenAgentsPolicy.SeedRules
  alias OpenAgents.Forge.Assignment

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
    Repo.update!(Ecto.Changeset.change(r.operator, admin: false))
    assert Disclosure.viewer(repository, r.operator) == %{account_id: r.operator.id, tier: :pulse}
  end

  test "an attempt loaded without its link is NotLoaded, and its tier column decides", ctx do
    for %{id: id, transparency_tier: column} <- ctx.attempts do
      attempt = Repo.get!(Assignment, id) |> Repo.preload(:work_job)
      assert %Ecto.Association.NotLoaded{} = attempt.artifact_link

      for reader <- [:anonymous, :member, :owner] do
        viewer = Disclosure.viewer(ctx.world.repository, ctx.readers[reader])

        expected =
          SeedRules.effective_tier(reader, reader_id(ctx.readers, reader), :not_loaded, column)

        assert Disclosure.item(attempt, viewer).tier == expected
      end
    end
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
end
