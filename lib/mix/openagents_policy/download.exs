defmodule Mix.OpenAgentsPolicy.Download do
  @moduledoc """
  Fetching one file over HTTP(S) for the precompiled path, with OTP's
  `:httpc` and nothing else (the compiler may use no Hex dependency).

  What it adds to a bare `:httpc.request/4`, and why:

    * **Proxies** from `HTTPS_PROXY`/`https_proxy` (https URLs),
      `HTTP_PROXY`/`http_proxy` (http URLs) and `NO_PROXY`/`no_proxy`,
      as curl and rustler_precompiled read them. `user:password@` in the
      proxy's URL is sent as `Proxy-Authorization` to the proxy only. An
      https URL goes through the proxy as a `CONNECT` tunnel, so TLS is
      still end to end.
    * **TLS** always `verify_peer`, against the PEM file named by
      `OPENAGENTS_POLICY_CACERTS_PATH` or `HEX_CACERTS_PATH` (for a proxy
      that intercepts TLS), else the OS store (`:public_key.cacerts_get/0`,
      OTP 25 and later). Every hop checks its own host's name: SNI and the
      hostname check name that host; an IP-address host sends no SNI and
      its certificate must name the IP address.
    * **Redirects** followed here (`autoredirect: false`), at most
      5. Credentials in the URL (`user:token@`) become `Authorization`,
      sent to the original scheme, host and port only, never to a host a
      redirect leads to, and never printed: every URL printed or returned
      goes through `redact/1`.
    * **Plain `http://`** only to a loopback host, unless
      `OPENAGENTS_POLICY_NIF_ALLOW_HTTP=1`: that applies to every hop.
    * **Retries**: 3 attempts at most, 1 s then 2 s apart, for a refused,
      reset or timed-out connection and for a 5xx; never for a 4xx, a TLS
      failure, a refusal of this module's, or (the caller's) a checksum
      mismatch. Each retry is printed.
    * **A size cap** of 64 MiB on the body, checked against
      `Content-Length` and while the body streams in.

  The environment's part (which proxy, which CA bundle and TLS options,
  whether plain http may be used) is read by `Mix.OpenAgentsPolicy.Network`.

  Owns only the transfer: what the bytes must be (the checksum), where they
  are cached and how they are extracted are `Mix.OpenAgentsPolicy.Precompiled`'s.
  Absent: a proxy spoken to over TLS (an `https://` proxy URL is refused),
  SOCKS, `.netrc`, IPv6 connections, and a cap on the body of a non-200
  answer (`:httpc` reads those whole; the attempt's deadline bounds them).
  """

  alias Mix.OpenAgentsPolicy.Network
  alias Mix.Tasks.Compile.OpenagentsPolicyNif, as: Nif

  @max_bytes 64 * 1024 * 1024
  @max_redirects 5
  @attempts 3
  @retry_delay 1_000
  @timeout 120_000
  @connect_timeout 20_000
  @transient ~w(econnrefused econnreset closed timeout etimedout socket_closed_remotely
                ehostunreach enetunreach)a
  # A stand-alone :httpc profile per request: its proxy settings are its
  # own, and no session outlives the request. Its name is fixed (its tables
  # are named by it), so one download runs at a time in a VM, as the
  # compiler's lock has it.
  @profile :openagents_policy_download

  @typedoc """
  Options, for tests: `:max_bytes` (64 MiB), `:retry_delay` (the first
  backoff in ms, 1000; the second is twice it) and `:timeout` (one
  attempt's deadline in ms, 120000).
  """
  @type option ::
          {:max_bytes, pos_integer()}
          | {:retry_delay, non_neg_integer()}
          | {:timeout, pos_integer()}

  @doc """
  The body of a `200` answer to `GET url`, following redirects, through
  the proxy the environment names. Else why not, a sentence that names no
  credential. Prints each URL fetched (redacted), each redirect, the proxy
  used and each retry.
  """
  @spec get(String.t(), [option()]) :: {:ok, binary()} | {:error, String.t()}
  def get(url, opts \\ []) do
    uri = URI.parse(url)

    if uri.scheme in ["http", "https"] and uri.host not in [nil, ""] do
      Nif.ensure_otp_apps([:inets, :ssl, :public_key, :crypto, :asn1])
      {:ok, _} = Application.ensure_all_started(:inets)
      {:ok, _} = Application.ensure_all_started(:ssl)

      state = %{
        origin: origin(uri),
        authorization: authorization(uri.userinfo),
        max_bytes: Keyword.get(opts, :max_bytes, @max_bytes),
        timeout: Keyword.get(opts, :timeout, @timeout),
        cacerts: nil
      }

      Mix.shell().info("Downloading #{redact(url)}")
      retrying(fn -> hop(%{uri | userinfo: nil, fragment: nil}, 0, state) end, opts, 1)
    else
      {:error, "#{redact(url)} is not an http:// or https:// URL"}
    end
  end

  @doc """
  `url` with its credentials hidden: the userinfo (`user:token@`) and the
  query (signed URLs carry a signature there) become `[REDACTED]`.
  """
  @spec redact(String.t()) :: String.t()
  def redact(url) do
    uri = URI.parse(url)
    redacted = if uri.userinfo, do: %{uri | userinfo: "[REDACTED]"}, else: uri
    redacted = if uri.query, do: %{redacted | query: "[REDACTED]"}, else: redacted
    URI.to_string(redacted)
  end

  # Attempt `number` of @attempts; the retryable failures wait and go again.
  defp retrying(attempt, opts, number) do
    case attempt.() do
      {:retry, why} when number < @attempts ->
        delay = Keyword.get(opts, :retry_delay, @retry_delay) * Integer.pow(2, number - 1)

        Mix.shell().info(
          "Download attempt #{number} of #{@attempts} failed (#{why}); retrying in #{seconds(delay)}"
        )

        Process.sleep(delay)
        retrying(attempt, opts, number + 1)

      {:retry, why} ->
        {:error, "#{why} (#{@attempts} attempts)"}

      other ->
        other
    end
  end

  defp seconds(ms) when rem(ms, 1000) == 0, do: "#{div(ms, 1000)} s"
  defp seconds(ms), do: "#{ms / 1000} s"

  # One request of a redirect chain: {:ok, body}, {:retry, why} or {:error, why}.
  defp hop(uri, hops, state) do
    with :ok <- Network.plain_http_allowed(uri),
         {:ok, proxy} <- Network.proxy_for(uri),
         {:ok, tls, cacerts} <- Network.tls_options(uri, state.cacerts) do
      state = %{state | cacerts: cacerts}

      case request(uri, proxy, tls, state) do
        {:redirect, _location} when hops >= @max_redirects ->
          {:error, "more than #{@max_redirects} redirects"}

        {:redirect, location} ->
          next = URI.merge(uri, location)
          next = %{next | userinfo: nil, fragment: nil}

          if next.scheme in ["http", "https"] and next.host not in [nil, ""] do
            Mix.shell().info("Redirected to #{redact(URI.to_string(next))}")
            hop(next, hops + 1, state)
          else
            {:error, "a redirect to #{redact(location)}, which is not an http(s) URL"}
          end

        other ->
          other
      end
    end
  end

  defp origin(uri), do: {uri.scheme, String.downcase(uri.host), uri.port}

  defp authorization(nil), do: nil

  defp authorization(userinfo) do
    ~c"Basic " ++ String.to_charlist(Base.encode64(URI.decode(userinfo)))
  end

  ## The request

  defp request(uri, proxy, tls, state) do
    headers =
      if state.authorization && origin(uri) == state.origin,
        do: [{~c"authorization", state.authorization}],
        else: []

    {proxy_options, proxy_auth} =
      case proxy do
        nil -> {[], []}
        {address, nil} -> {[{proxy_key(uri), {address, []}}], []}
        {address, auth} -> {[{proxy_key(uri), {address, []}}], [proxy_auth: auth]}
      end

    http_options =
      proxy_auth ++
        [autoredirect: false, timeout: state.timeout, connect_timeout: @connect_timeout] ++
        if(tls == [], do: [], else: [ssl: tls])

    options = [sync: false, stream: {:self, :once}, body_format: :binary]
    {:ok, profile} = :inets.start(:httpc, [profile: @profile], :stand_alone)

    try do
      :ok = :httpc.set_options(proxy_options, profile)
      request = {String.to_charlist(URI.to_string(uri)), headers}

      case :httpc.request(:get, request, http_options, options, profile) do
        {:ok, ref} ->
          deadline = System.monotonic_time(:millisecond) + state.timeout
          answer = receive_body(ref, nil, deadline, state)
          flush(ref)
          answer

        {:error, reason} ->
          failure(reason)
      end
    after
      stop(profile)
    end
  end

  # The profile is linked to this process, and :inets.stop/2 is an exit
  # signal: unlinked first, so it does not take this process along. Its
  # named tables are gone once it is down, for the next request's profile.
  defp stop(profile) do
    monitor = Process.monitor(profile)
    Process.unlink(profile)
    :inets.stop(:stand_alone, profile)

    receive do
      {:DOWN, ^monitor, :process, _, _} -> :ok
    end
  end

  defp proxy_key(%URI{scheme: "https"}), do: :https_proxy
  defp proxy_key(%URI{scheme: "http"}), do: :proxy

  # The answer to request `ref`, streamed in (`pid` is the handler that
  # sends it, once the body starts) and refused beyond the size cap.
  defp receive_body(ref, pid, deadline, state, chunks \\ [], size \\ 0) do
    receive do
      {:http, {^ref, :stream_start, headers, pid}} ->
        case content_length(headers) do
          length when is_integer(length) and length > state.max_bytes ->
            {:error, too_big(state.max_bytes, "#{length} bytes announced")}

          _ ->
            :ok = :httpc.stream_next(pid)
            receive_body(ref, pid, deadline, state)
        end

      {:http, {^ref, :stream, chunk}} ->
        size = size + byte_size(chunk)

        if size > state.max_bytes do
          {:error, too_big(state.max_bytes, "more than that was sent")}
        else
          :ok = :httpc.stream_next(pid)
          receive_body(ref, pid, deadline, state, [chunk | chunks], size)
        end

      {:http, {^ref, :stream_end, _headers}} ->
        {:ok, chunks |> Enum.reverse() |> IO.iodata_to_binary()}

      {:http, {^ref, {{_version, status, reason}, headers, _body}}} ->
        by_status(status, reason, headers)

      {:http, {^ref, {:error, reason}}} ->
        failure(reason)
    after
      max(deadline - System.monotonic_time(:millisecond), 0) ->
        {:retry, "no complete answer within #{seconds(state.timeout)}"}
    end
  end

  # What the handler sent before the profile stopped.
  defp flush(ref) do
    receive do
      {:http, message} when elem(message, 0) == ref -> flush(ref)
    after
      0 -> :ok
    end
  end

  defp too_big(max, what), do: "the download is larger than its cap of #{max} bytes: #{what}"

  defp content_length(headers) do
    with {_, value} <- List.keyfind(headers, ~c"content-length", 0),
         {length, ""} <- Integer.parse(List.to_string(value)) do
      length
    else
      _ -> nil
    end
  end

  defp by_status(status, _reason, headers) when status in [301, 302, 303, 307, 308] do
    case List.keyfind(headers, ~c"location", 0) do
      {_, location} -> {:redirect, List.to_string(location)}
      nil -> {:error, "HTTP #{status} without a Location"}
    end
  end

  defp by_status(status, reason, _headers) when status >= 500,
    do: {:retry, "HTTP #{status} #{reason}"}

  defp by_status(status, reason, _headers), do: {:error, "HTTP #{status} #{reason}"}

  # A connection refused, reset or timed out is retried; a TLS failure (a
  # certificate refused) or a name that does not resolve is not.
  defp failure(reason) do
    cause = cause(reason)

    if cause in @transient,
      do: {:retry, describe(cause)},
      else: {:error, describe(cause)}
  end

  # The innermost reason: :httpc wraps it with the addresses and the TLS
  # options (CA certificates included), which are not worth printing.
  defp cause({:failed_connect, details}) do
    Enum.find_value(details, {:failed_connect, List.keyfind(details, :to_address, 0)}, fn
      {kind, _, cause} when kind in [:inet, :tls] -> cause
      _ -> nil
    end)
  end

  defp cause(reason), do: reason

  defp describe({:tls_alert, {alert, text}}) do
    # "TLS client: In state ... generated CLIENT ALERT: Fatal - Unknown CA\n ..."
    detail =
      text
      |> to_string()
      |> String.split("ALERT: ")
      |> List.last()
      |> String.replace(~r/\s+/, " ")

    hint =
      if alert == :unknown_ca,
        do: " (no CA in the bundle signed the certificate; HEX_CACERTS_PATH names a bundle)",
        else: ""

    "TLS #{alert}: #{String.trim(detail)}#{hint}"
  end

  defp describe({:could_not_establish_ssl_tunnel, {_version, status, reason}}),
    do: "the proxy refused the tunnel: HTTP #{status} #{reason}"

  defp describe(reason) when is_atom(reason), do: "#{reason}"
  defp describe(reason), do: inspect(reason, limit: 10)
end
