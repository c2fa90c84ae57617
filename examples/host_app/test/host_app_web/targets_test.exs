defmodule HostAppWeb.TargetsTest do
  @moduledoc "GET /api/targets: each reader's inventory, from the seeded Box and Computer."
  use HostAppWeb.ConnCase, async: false

  alias HostApp.{Presence}
  alias OpenAgents.Delegations.Target

  setup :seeded

  defp inventory(ctx, reader), do: request_as(ctx.readers[reader], :get, "/api/targets")

  test "an anonymous reader gets 401", ctx do
    assert %{"errors" => %{"detail" => "Unauthorized"}} = inventory(ctx, :anonymous) |> json!(401)
  end

  test "the owner sees its idle Box (startable) and its Computer (cold: not online)", ctx do
    %{"data" => [box, computer]} = inventory(ctx, :owner) |> json!(200)

    assert box == %{
             "ref" => "box:" <> ctx.world.box.id,
             "substrate_state" => "idle",
             "seam" => seam("box", "idle", true)
           }

    assert computer["ref"] == "computer:" <> ctx.world.machine.id
    assert computer["substrate_state"] == "active"
    assert computer["seam"] == seam("computer", "cold", true)
    assert computer["seam"]["unavailable_reason"] == "cold"
  end

  test "a Computer is active while it is online, and its owner may start it", ctx do
    Presence.connect(ctx.world.machine.id)
    on_exit(fn -> Presence.disconnect(ctx.world.machine.id) end)

    %{"data" => [_box, computer]} = inventory(ctx, :owner) |> json!(200)
    assert computer["seam"]["lifecycle"] == "active"
    assert computer["seam"]["capabilities"] == ["start"]
  end

  test "an operator sees every target without the capability to start another's", ctx do
    %{"data" => entries} = inventory(ctx, :operator) |> json!(200)

    assert Enum.map(entries, & &1["ref"]) == [
             "box:" <> ctx.world.box.id,
             "computer:" <> ctx.world.machine.id
           ]

    assert Enum.all?(entries, &(&1["seam"]["capabilities"] == []))
    assert hd(entries)["seam"]["unavailable_reason"] == "not_authorized"
  end

  test "a user who owns nothing sees nothing", ctx do
    for reader <- [:stranger, :member],
        do: assert(inventory(ctx, reader) |> json!(200) == %{"data" => []})
  end

  test "no machine secret reaches the inventory", ctx do
    conn = inventory(ctx, :operator)
    json!(conn, 200)
    refute conn.resp_body =~ "owner-laptop"
    refute conn.resp_body =~ ctx.readers.owner.id
  end

  # The seam the library decides for a target of `kind` whose substrate word
  # is `word` (a Box state, or a computer lifecycle).
  defp seam(kind, word, authorized?) do
    lifecycle = if kind == "box", do: Target.box_lifecycle(word), else: word
    Target.seam(kind, lifecycle, authorized?)
  end
end
