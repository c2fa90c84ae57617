defmodule HostApp.EvidenceTest do
  use ExUnit.Case, async: true

  alias HostApp.{Evidence, Fixtures, SeedRules}

  setup do
    %{repository: repository, readers: readers} = Fixtures.world()
    live = Fixtures.link(readers.owner.id, repository.id)

    %{
      repository: repository,
      readers: readers,
      linked: Fixtures.evidence(repository.id, live),
      # No link, tier column `pulse`: a public issue may say restricted evidence exists.
      public: Fixtures.evidence(repository.id, nil, %{transparency_tier: "pulse"}),
      revoked:
        Fixtures.evidence(
          repository.id,
          Fixtures.link(readers.owner.id, repository.id, %{revoked_at: ~U[2026-08-26 00:00:00Z]})
        )
    }
  end

  defp one(ctx, reader, edge) do
    assert [projected] = Evidence.render(ctx.repository, ctx.readers[reader], [edge])
    projected
  end

  test "pulse says the family and the verdict, without the commit, the receipt or the place",
       ctx do
    for reader <- [:anonymous, :stranger] do
      edge = one(ctx, reader, ctx.linked)
      assert Enum.sort(Map.keys(edge)) == SeedRules.fields(:evidence, :pulse)
      assert edge.family == "deployment"
      assert edge.result == "passed"
      assert edge.plane == "tenant"
      assert edge.source == "closing_reference"
      assert edge.recorded_at == ctx.linked.inserted_at
    end
  end

  test "a member, the owner and an operator see the ledger: commit, receipt, environment", ctx do
    for reader <- [:member, :owner, :operator] do
      edge = one(ctx, reader, ctx.linked)
      assert Enum.sort(Map.keys(edge)) == SeedRules.fields(:evidence, :ledger)
      assert edge.commit == ctx.linked.commit_sha
      assert edge.receipt_id == "rcpt_123"
      assert edge.environment == "acme-production-eu"
    end
  end

  test "an unlinked pulse edge clamps a member to pulse; an operator still reads it whole", ctx do
    assert Enum.sort(Map.keys(one(ctx, :member, ctx.public))) ==
             SeedRules.fields(:evidence, :pulse)

    assert Enum.sort(Map.keys(one(ctx, :operator, ctx.public))) ==
             SeedRules.fields(:evidence, :ledger)
  end

  test "the actor and the other never-listed columns never appear", ctx do
    never = SeedRules.never(:evidence) ++ [:commit_sha, :inserted_at, :__meta__, :artifact_link]

    for reader <- [:anonymous, :stranger, :member, :owner, :operator],
        edge <- [ctx.linked, ctx.public] do
      projected = one(ctx, reader, edge)
      assert never -- Map.keys(projected) == never
      refute inspect(projected) =~ "SECRET"
    end
  end

  test "a revoked edge leaves the list for everyone", ctx do
    for reader <- [:anonymous, :stranger, :member, :owner, :operator] do
      assert Evidence.render(ctx.repository, ctx.readers[reader], [ctx.revoked, ctx.linked])
             |> Enum.map(& &1.id) == [ctx.linked.id]
    end
  end
end
