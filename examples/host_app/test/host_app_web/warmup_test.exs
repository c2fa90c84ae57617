defmodule HostAppWeb.WarmupTest do
  @moduledoc """
  HostAppWeb.Warmup: a request that reaches the endpoint before Phoenix
  has written the endpoint's persistent term (as the listener of a node
  that is starting accepts one) waits for it, and is answered. Not async:
  the test takes the endpoint's persistent term away from the whole VM.
  """
  use HostAppWeb.ConnCase, async: false

  setup :seeded

  @key {Phoenix.Endpoint, HostAppWeb.Endpoint}
  @path "/api/repositories/acme-widgets/attempts"

  # The endpoint as it is between its listener's start and Phoenix's
  # warmup: no persistent term. Put back when the test ends, whatever happens.
  defp cold do
    saved = :persistent_term.get(@key)
    on_exit(fn -> :persistent_term.put(@key, saved) end)
    :persistent_term.erase(@key)
    fn -> :persistent_term.put(@key, saved) end
  end

  test "a request before the warmup waits for it, then is answered", ctx do
    warm = cold()

    assert_raise RuntimeError, ~r/could not find persistent term/, fn ->
      HostAppWeb.Endpoint.script_name()
    end

    parent = self()

    request =
      Task.async(fn ->
        send(parent, :sent)
        request_as(ctx.readers.member, :get, @path)
      end)

    # Cold for 100 ms after the request was made: it must still be waiting.
    assert_receive :sent
    Process.sleep(100)
    assert Task.yield(request, 0) == nil, "answered before the endpoint was warm"
    warm.()
    conn = Task.await(request)
    assert %{"data" => [_ | _]} = json!(conn, 200)
  end

  test "an endpoint that never warms answers 503 with Retry-After" do
    cold()
    refute HostAppWeb.Warmup.await(HostAppWeb.Endpoint, 20)
    conn = HostAppWeb.Unavailable.retry_later(Phoenix.ConnTest.build_conn())
    assert conn.status == 503
    assert Plug.Conn.get_resp_header(conn, "retry-after") == ["1"]
  end
end
