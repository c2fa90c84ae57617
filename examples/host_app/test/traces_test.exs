defmodule HostApp.TracesTest do
  use ExUnit.Case, async: true

  alias HostApp.{Fixtures, SeedRules, Traces}

  @readers [:anonymous, :stranger, :member, :owner, :operator]

  setup do
    %{repository: repository, readers: readers} = Fixtures.world()
    principal = %{"type" => "user", "id" => readers.owner.id}

    attempt =
      Fixtures.attempt(repository.id, principal, Fixtures.link(readers.owner.id, repository.id))

    revoked_attempt =
      Fixtures.attempt(
        repository.id,
        principal,
        Fixtures.link(readers.owner.id, repository.id, %{revoked_at: ~U[2026-08-26 00:00:00Z]})
      )

    %{
      repository: repository,
      readers: readers,
      attempt: attempt,
      trace: Fixtures.trace(attempt),
      private: Fixtures.trace(attempt, %{visibility: "private"}),
      revoked_attempt: revoked_attempt,
      revoked_trace: Fixtures.trace(revoked_attempt)
    }
  end

  defp render(ctx, reader, pairs), do: Traces.render(ctx.repository, ctx.readers[reader], pairs)

  test "pulse: that the run was recorded, its format and how many steps", ctx do
    for reader <- [:anonymous, :stranger] do
      assert [t] = render(ctx, reader, [{ctx.attempt, ctx.trace}])
      assert Enum.sort(Map.keys(t)) == SeedRules.fields(:trace, :pulse)
      assert t.schema_version == "ATIF-v1.7"
      assert t.step_count == 3
      assert t.recorded_at == ctx.trace.inserted_at
    end
  end

  test "ledger adds the digest and the size; glass adds nothing more", ctx do
    for reader <- [:member, :owner, :operator] do
      assert [t] = render(ctx, reader, [{ctx.attempt, ctx.trace}])
      assert Enum.sort(Map.keys(t)) == SeedRules.fields(:trace, :ledger)
      assert t.digest == ctx.trace.digest
      assert t.byte_size == 4096
    end
  end

  test "the document is never published, not even to its uploader or an operator", ctx do
    for reader <- @readers do
      assert [t] = render(ctx, reader, [{ctx.attempt, ctx.trace}])
      refute Map.has_key?(t, :document)
      for column <- SeedRules.never(:trace), do: refute(Map.has_key?(t, column))
      text = inspect(t, limit: :infinity, printable_limit: :infinity)
      refute text =~ "SECRET"
      refute text =~ "steps"
    end
  end

  test "a private trace and the trace of a revoked attempt are not listed", ctx do
    for reader <- @readers do
      assert render(ctx, reader, [{ctx.attempt, ctx.private}]) == []
      assert render(ctx, reader, [{ctx.revoked_attempt, ctx.revoked_trace}]) == []
    end
  end
end
