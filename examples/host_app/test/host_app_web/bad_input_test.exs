defmodule HostAppWeb.BadInputTest do
  @moduledoc "Bytes PostgreSQL would refuse (not UTF-8, NUL) never reach it: a 4xx, never a 500."
  use HostAppWeb.ConnCase, async: true

  setup :seeded

  test "a slug or an id that is not valid text is 404", ctx do
    for path <- [
          "/api/repositories/%FF/attempts",
          "/api/repositories/acme%00widgets/attempts",
          "/api/attempts/%FF",
          "/api/delegations/%00",
          "/api/links/%FF/revoke"
        ] do
      method = if path =~ "revoke", do: :post, else: :get

      assert %{"errors" => %{"detail" => "Not Found"}} =
               request_as(ctx.readers.operator, method, path) |> json!(404)
    end

    conn =
      request_as(ctx.readers.owner, :post, "/api/repositories/%FF/attempts", %{
        issue_number: 1,
        target_kind: "box"
      })

    assert json!(conn, 404)
  end

  test "a handle that is not valid text is 401", ctx do
    for handle <- [<<0xFF>>, "own\0er", String.duplicate("x", 10_000)] do
      user = %{ctx.readers.owner | handle: handle}

      assert %{"errors" => %{"detail" => "Unauthorized"}} =
               request_as(user, :get, "/api/targets") |> json!(401)
    end
  end
end
