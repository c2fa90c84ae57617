defmodule HostAppWeb.ServedByTest do
  @moduledoc "Every response names the decision digest that answered it; the node only when asked."
  # Not async: HostAppWeb.ServedBy's headers are one term for the whole VM.
  use HostAppWeb.ConnCase, async: false

  setup :seeded

  test "x-policy-digest on every response, x-served-by-node only once turned on", ctx do
    on_exit(fn -> HostAppWeb.ServedBy.put(false) end)
    digest = OpenAgentsPolicy.decision_digest()

    for {reader, path, status} <- [
          {ctx.readers.member, "/api/repositories/acme-widgets/attempts", 200},
          {nil, "/api/targets", 401},
          {ctx.readers.member, "/api/attempts/nope", 404}
        ] do
      conn = request_as(reader, :get, path)
      assert conn.status == status
      assert Plug.Conn.get_resp_header(conn, "x-policy-digest") == [digest]
      assert Plug.Conn.get_resp_header(conn, "x-served-by-node") == []
    end

    HostAppWeb.ServedBy.put(true)
    conn = request_as(nil, :get, "/api/repositories/acme-widgets/attempts")
    assert Plug.Conn.get_resp_header(conn, "x-served-by-node") == [Atom.to_string(node())]
    assert Plug.Conn.get_resp_header(conn, "x-policy-digest") == [digest]
  end
end
