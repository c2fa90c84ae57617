defmodule HostAppWeb.RevokeLinkTest do
  @moduledoc "POST /api/links/:id/revoke: the link's account or an operator; then dark to everyone."
  use HostAppWeb.ConnCase, async: true

  alias OpenAgents.Transparency.ArtifactLink

  setup :seeded

  setup ctx do
    [linked | _] = ctx.attempts
    %{link: linked.artifact_link, attempt: linked}
  end

  defp revoke(ctx, reader, id \\ nil),
    do: request_as(ctx.readers[reader], :post, "/api/links/#{id || ctx.link.id}/revoke")

  test "another user gets 403, an anonymous reader 401, and the link stays live", ctx do
    assert json!(revoke(ctx, :anonymous), 401)
    for reader <- [:stranger, :member], do: assert(json!(revoke(ctx, reader), 403))
    assert Repo.get!(ArtifactLink, ctx.link.id).revoked_at == nil
  end

  for reader <- [:owner, :operator] do
    @reader reader
    test "the #{reader} revokes it; the attempt is then dark to every reader, operators included",
         ctx do
      %{"data" => %{"id" => id, "revoked_at" => revoked_at}} = revoke(ctx, @reader) |> json!(200)
      assert id == ctx.link.id
      assert {:ok, _, 0} = DateTime.from_iso8601(revoked_at)
      assert Repo.get!(ArtifactLink, id).revoked_at

      for r <- readers() do
        %{"data" => items} =
          request_as(ctx.readers[r], :get, "/api/repositories/acme-widgets/attempts")
          |> json!(200)

        refute ctx.attempt.id in Enum.map(items, & &1["attempt"]["id"])
        assert json!(request_as(ctx.readers[r], :get, "/api/attempts/#{ctx.attempt.id}"), 404)
      end

      # Revoking again is 409, and the first stamp stays.
      tombstone = Repo.get!(ArtifactLink, id).revocation_tombstone
      assert tombstone == %{"revoked_by" => ctx.readers[@reader].id}

      for again <- [:owner, :operator] do
        assert revoke(ctx, again) |> json!(409) == %{"errors" => %{"detail" => "Conflict"}}
      end

      assert %{revocation_tombstone: ^tombstone} = Repo.get!(ArtifactLink, id)
      assert DateTime.to_iso8601(Repo.get!(ArtifactLink, id).revoked_at) == revoked_at
    end
  end

  test "two stamps of one live link: the guarded update lets exactly one write", ctx do
    assert {:ok, first} = HostApp.Attempts.stamp(ctx.link.id, %{"revoked_by" => "first"})

    assert {:error, :already_revoked} =
             HostApp.Attempts.stamp(ctx.link.id, %{"revoked_by" => "second"})

    link = Repo.get!(ArtifactLink, ctx.link.id)
    assert link.revocation_tombstone == %{"revoked_by" => "first"}
    assert link.revoked_at == first.revoked_at
  end

  test "an unknown or malformed link id is 404", ctx do
    for id <- [Ecto.UUID.generate(), "nope"], do: assert(json!(revoke(ctx, :operator, id), 404))
  end
end
