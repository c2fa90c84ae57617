defmodule HostAppWeb.Warmup do
  @moduledoc """
  A request that reaches the endpoint before the endpoint is warm waits
  until it is, for at most 5 s, then gets a 503 with `Retry-After`: it is
  answered late, never broken.

  Why. Phoenix (1.7 and 1.8) starts the HTTP server before it writes the
  endpoint's persistent term, which the endpoint's `call/2` reads before any
  plug (`script_name/0`): a request accepted in between raises and its
  client gets a 500 without a length. Every start has that window: a first
  boot, a restart after a crash, a node put back behind a load balancer.

  How. `use`d after `use Phoenix.Endpoint`, it wraps the `call/2` Phoenix
  defines: while `script_name/0` raises, the request polls every 5 ms. Warm,
  it costs one persistent-term read per request.
  """

  require Logger

  @wait_ms 5_000
  @poll_ms 5

  defmacro __using__(_opts) do
    quote do
      @before_compile HostAppWeb.Warmup
    end
  end

  defmacro __before_compile__(_env) do
    quote do
      defoverridable call: 2

      def call(conn, opts) do
        if HostAppWeb.Warmup.await(__MODULE__),
          do: super(conn, opts),
          else: HostAppWeb.Unavailable.retry_later(conn)
      end
    end
  end

  @doc """
  Whether `endpoint` is warm (its persistent term written), waiting up to
  `wait_ms` for it.
  """
  @spec await(module(), non_neg_integer()) :: boolean()
  def await(endpoint, wait_ms \\ @wait_ms) do
    warm?(endpoint) or waited(endpoint, wait_ms)
  end

  # The slow path, at boot only: each request that waited says so.
  defp waited(endpoint, wait_ms) do
    start = System.monotonic_time(:millisecond)
    warm? = wait(endpoint, start + wait_ms)
    took = System.monotonic_time(:millisecond) - start

    if warm? do
      Logger.info("#{inspect(endpoint)}: a request waited #{took} ms for the endpoint to warm up")
    else
      Logger.warning("#{inspect(endpoint)}: not warm after #{took} ms; answered 503")
    end

    warm?
  end

  defp wait(endpoint, deadline) do
    cond do
      warm?(endpoint) ->
        true

      System.monotonic_time(:millisecond) >= deadline ->
        false

      true ->
        Process.sleep(@poll_ms)
        wait(endpoint, deadline)
    end
  end

  defp warm?(endpoint) do
    _ = endpoint.script_name()
    true
  rescue
    RuntimeError -> false
  end
end
