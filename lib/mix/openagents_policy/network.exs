defmodule Mix.OpenAgentsPolicy.Network do
  @moduledoc """
  What the environment says about reaching a URL, for
  `Mix.OpenAgentsPolicy.Download`: the proxy (`HTTPS_PROXY`/`https_proxy`
  for https, `HTTP_PROXY`/`http_proxy` for http, bypassed by
  `NO_PROXY`/`no_proxy`), the TLS options and CA certificates
  (`OPENAGENTS_POLICY_CACERTS_PATH`, then `HEX_CACERTS_PATH`, else the OS
  store; always `verify_peer`, each host's own name checked), and whether
  plain http may be used (`OPENAGENTS_POLICY_NIF_ALLOW_HTTP`).

  Owns reading those settings. Absent: the transfer itself (retries,
  redirects, the size cap), which is the download's; a proxy spoken to over
  TLS, SOCKS, and CIDR ranges in `NO_PROXY`.
  """

  alias Mix.OpenAgentsPolicy.Download

  @allow_http "OPENAGENTS_POLICY_NIF_ALLOW_HTTP"

  @doc """
  `:ok` when `uri` may be fetched: https always, plain http only to a
  loopback host unless `#{@allow_http}=1`; else why not.
  """
  @spec plain_http_allowed(URI.t()) :: :ok | {:error, String.t()}
  def plain_http_allowed(%URI{scheme: "https"}), do: :ok

  def plain_http_allowed(%URI{host: host}) do
    if loopback?(host) or System.get_env(@allow_http) in ["1", "true"] do
      :ok
    else
      {:error,
       "plain http:// to #{host}, which is not loopback, is refused: use an https:// URL, " <>
         "or set #{@allow_http}=1 to allow it"}
    end
  end

  defp loopback?(host) do
    case :inet.parse_address(String.to_charlist(host)) do
      {:ok, {127, _, _, _}} -> true
      {:ok, {0, 0, 0, 0, 0, 0, 0, 1}} -> true
      {:ok, _} -> false
      {:error, _} -> String.downcase(host) == "localhost"
    end
  end

  ## Proxies

  @doc """
  The proxy the environment names for `uri`: `{:ok, nil}` (none, or
  `NO_PROXY` bypasses it), `{:ok, {{host, port}, auth | nil}}`, or why the
  setting is refused. Prints the proxy used (redacted).
  """
  @spec proxy_for(URI.t()) ::
          {:ok, nil | {{charlist(), :inet.port_number()}, {charlist(), charlist()} | nil}}
          | {:error, String.t()}
  def proxy_for(uri) do
    names =
      if uri.scheme == "https", do: ~w(HTTPS_PROXY https_proxy), else: ~w(HTTP_PROXY http_proxy)

    case Enum.find(names, &(System.get_env(&1) not in [nil, ""])) do
      nil ->
        {:ok, nil}

      name ->
        if no_proxy?(uri), do: {:ok, nil}, else: parse_proxy(name, System.get_env(name))
    end
  end

  defp parse_proxy(name, value) do
    proxy = URI.parse(if value =~ "://", do: value, else: "http://" <> value)

    if proxy.scheme == "http" and proxy.host not in [nil, ""] do
      auth =
        case proxy.userinfo && String.split(proxy.userinfo, ":", parts: 2) do
          nil ->
            nil

          [user] ->
            {String.to_charlist(URI.decode(user)), ~c""}

          [user, password] ->
            {String.to_charlist(URI.decode(user)), String.to_charlist(URI.decode(password))}
        end

      shown = Download.redact(URI.to_string(%{proxy | path: nil}))
      Mix.shell().info("Through the proxy #{shown} (#{name})")
      {:ok, {{String.to_charlist(proxy.host), proxy.port}, auth}}
    else
      {:error,
       "#{name}=#{Download.redact(value)} is not an http:// proxy URL (https:// and socks are not supported)"}
    end
  end

  # NO_PROXY: comma-separated; `*` is every host; a name matches itself and
  # its subdomains (`example.com`, `.example.com`, `*.example.com`); an IP
  # address matches itself; `:port` narrows an entry to that port.
  defp no_proxy?(uri) do
    host = String.downcase(uri.host)

    (System.get_env("NO_PROXY") || System.get_env("no_proxy") || "")
    |> String.split(",", trim: true)
    |> Enum.map(&(&1 |> String.trim() |> String.downcase()))
    |> Enum.any?(fn
      "*" ->
        true

      entry ->
        {name, port} = no_proxy_entry(entry)
        name = name |> String.trim_leading("*") |> String.trim(".")

        name != "" and port in [nil, uri.port] and
          (host == name or String.ends_with?(host, "." <> name))
    end)
  end

  # {name or IP address, port or nil}: an IPv6 address is itself colons.
  defp no_proxy_entry(entry) do
    bare = entry |> String.trim_leading("[") |> String.trim_trailing("]")

    with {:error, _} <- :inet.parse_address(String.to_charlist(bare)),
         [_, name, port] <- Regex.run(~r/^\[?(.+?)\]?:(\d+)$/, entry) do
      {name, String.to_integer(port)}
    else
      {:ok, _ip} -> {bare, nil}
      nil -> {entry, nil}
    end
  end

  ## TLS

  @doc """
  The `:ssl` options for a request to `uri` (none for http), with the CA
  certificates: `loaded` when a previous hop read them, else read now.
  Returns them for the next hop.
  """
  @spec tls_options(URI.t(), [binary()] | nil) ::
          {:ok, keyword(), [binary()] | nil} | {:error, String.t()}
  def tls_options(%URI{scheme: "http"}, loaded), do: {:ok, [], loaded}

  def tls_options(%URI{host: host}, loaded) do
    with {:ok, cacerts} <- cacerts(loaded) do
      common = [
        verify: :verify_peer,
        cacerts: cacerts,
        depth: 4,
        customize_hostname_check: [match_fun: :public_key.pkix_verify_hostname_match_fun(:https)]
      ]

      per_host =
        case :inet.parse_address(String.to_charlist(host)) do
          # No SNI names an IP address (RFC 6066), and without SNI OTP
          # checks no name: the IP address is checked here instead.
          {:ok, ip} -> [server_name_indication: :disable, verify_fun: {verify_ip(), ip}]
          {:error, _} -> [server_name_indication: String.to_charlist(host)]
        end

      {:ok, common ++ per_host, cacerts}
    end
  end

  defp verify_ip do
    fn
      _cert, {:bad_cert, _} = reason, _ip ->
        {:fail, reason}

      _cert, {:extension, _}, ip ->
        {:unknown, ip}

      _cert, :valid, ip ->
        {:valid, ip}

      cert, :valid_peer, ip ->
        if :public_key.pkix_verify_hostname(cert, ip: ip),
          do: {:valid, ip},
          else: {:fail, {:bad_cert, :hostname_check_failed}}
    end
  end

  defp cacerts(loaded) when is_list(loaded), do: {:ok, loaded}

  defp cacerts(nil) do
    case Enum.find(
           ~w(OPENAGENTS_POLICY_CACERTS_PATH HEX_CACERTS_PATH),
           &(System.get_env(&1) not in [nil, ""])
         ) do
      nil ->
        try do
          {:ok, :public_key.cacerts_get()}
        rescue
          error ->
            {:error,
             "OTP found no CA certificates in the OS store (#{Exception.message(error)}): " <>
               "set HEX_CACERTS_PATH to a PEM file of CA certificates"}
        end

      name ->
        path = System.get_env(name)

        with {:ok, pem} <- File.read(path),
             [_ | _] = ders <-
               for({:Certificate, der, :not_encrypted} <- :public_key.pem_decode(pem), do: der) do
          {:ok, ders}
        else
          {:error, reason} ->
            {:error, "#{name}=#{path} cannot be read (#{:file.format_error(reason)})"}

          [] ->
            {:error, "#{name}=#{path} holds no PEM certificate"}
        end
    end
  end
end
