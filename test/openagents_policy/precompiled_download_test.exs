defmodule OpenAgentsPolicy.PrecompiledDownloadTest.Servers do
  @moduledoc """
  Servers on 127.0.0.1 (port 0) for the download's tests: an HTTP(S)
  server whose answers a function chooses, an HTTP proxy (`CONNECT` and
  absolute-form requests), and certificates from a test CA made at test
  time with `:public_key`.

  Each server reports what it received to the process that started it:
  `{:served, name, request}` and `{:proxied, request}`, a request being
  `%{line: "GET /x HTTP/1.1", headers: %{"name" => "value"}}` (names in
  lower case). Listening sockets belong to the starting process, so a
  server stops with its test. A module of this file, not of test/support:
  :ssl and :inets are on the code path only once test_helper.exs ran. Absent: keep-alive (every answer closes its
  connection), request bodies.
  """

  @curve {:namedCurve, :secp256r1}

  @typedoc "What a handler answers: the bytes of a response, or `:close` to hang up unanswered."
  @type answer :: iodata() | :close | :hang

  @doc "A test CA: `%{cert: der, key: key}` and its PEM file, written under `dir`."
  @spec ca!(Path.t()) :: {map(), Path.t()}
  def ca!(dir) do
    ca =
      :public_key.pkix_test_root_cert(~c"openagents_policy test CA", key: @curve, digest: :sha256)

    file = Path.join(dir, "test-ca.pem")
    File.mkdir_p!(dir)
    File.write!(file, :public_key.pem_encode([{:Certificate, ca.cert, :not_encrypted}]))
    {ca, file}
  end

  @doc """
  A server certificate from `ca` naming only `names` (`{:dns, "localhost"}`
  or `{:ip, {127, 0, 0, 1}}`): the `:ssl` options `[cert:, key:]`.
  """
  @spec certificate(map(), [{:dns, String.t()} | {:ip, :inet.ip4_address()}]) :: keyword()
  def certificate(ca, names) do
    sans =
      for name <- names do
        case name do
          {:dns, dns} -> {:dNSName, String.to_charlist(dns)}
          {:ip, ip} -> {:iPAddress, ip |> Tuple.to_list() |> :erlang.list_to_binary()}
        end
      end

    peer = [key: @curve, digest: :sha256, extensions: [{:Extension, {2, 5, 29, 17}, false, sans}]]

    %{server_config: config} =
      :public_key.pkix_test_data(%{
        server_chain: %{root: ca, intermediates: [], peer: peer},
        client_chain: %{
          root: [key: @curve, digest: :sha256],
          intermediates: [],
          peer: [key: @curve]
        }
      })

    Keyword.take(config, [:cert, :key])
  end

  @doc """
  Serves on 127.0.0.1: `handler.(request, n)` answers the `n`th connection
  (from 1). With `tls: [cert:, key:]`, over TLS. Returns the port.
  """
  @spec serve!(atom(), (map(), pos_integer() -> answer()), keyword()) :: :inet.port_number()
  def serve!(name, handler, opts \\ []) do
    owner = self()
    counter = :counters.new(1, [])
    tls = opts[:tls]

    {transport, listen} =
      if tls do
        {:ok, _} = Application.ensure_all_started(:ssl)

        {:ok, l} =
          :ssl.listen(
            0,
            [ip: {127, 0, 0, 1}, mode: :binary, active: false, reuseaddr: true] ++ tls
          )

        {:ssl, l}
      else
        {:ok, l} =
          :gen_tcp.listen(0, ip: {127, 0, 0, 1}, mode: :binary, active: false, reuseaddr: true)

        {:gen_tcp, l}
      end

    {:ok, {_, port}} = apply(sockname_module(transport), :sockname, [listen])

    spawn(fn ->
      accept_loop(transport, listen, fn socket ->
        :counters.add(counter, 1, 1)
        n = :counters.get(counter, 1)

        with {:ok, socket} <- handshake(transport, socket),
             {:ok, head, _rest} <- read_head(transport, socket, "") do
          request = parse_head(head)
          send(owner, {:served, name, request})

          case handler.(request, n) do
            :close -> :ok
            # Until the client hangs up.
            :hang -> transport.recv(socket, 0, 60_000)
            answer -> transport.send(socket, answer)
          end

          transport.close(socket)
        end
      end)
    end)

    port
  end

  @doc """
  An HTTP proxy on 127.0.0.1: `CONNECT host:port` opens a tunnel, an
  absolute-form request is passed on to its host; or, given `refusal`,
  every request gets that answer. Returns the port.
  """
  @spec proxy!(iodata() | nil) :: :inet.port_number()
  def proxy!(refusal \\ nil) do
    owner = self()

    {:ok, listen} =
      :gen_tcp.listen(0, ip: {127, 0, 0, 1}, mode: :binary, active: false, reuseaddr: true)

    {:ok, {_, port}} = :inet.sockname(listen)

    spawn(fn ->
      accept_loop(:gen_tcp, listen, fn client ->
        with {:ok, head, rest} <- read_head(:gen_tcp, client, "") do
          request = parse_head(head)
          send(owner, {:proxied, request})

          if refusal,
            do: :gen_tcp.send(client, refusal),
            else: tunnel(client, request, head, rest)
        end
      end)
    end)

    port
  end

  @doc "A `200` answer carrying `body`."
  @spec ok(iodata()) :: iodata()
  def ok(body), do: answer(200, "OK", [{"content-length", IO.iodata_length(body)}], body)

  @doc "An answer with `status`, `reason`, `headers` and `body`; the connection closes after it."
  @spec answer(pos_integer(), String.t(), [{String.t(), term()}], iodata()) :: iodata()
  def answer(status, reason, headers, body \\ "") do
    [
      "HTTP/1.1 #{status} #{reason}\r\n",
      for({name, value} <- headers ++ [{"connection", "close"}], do: "#{name}: #{value}\r\n"),
      "\r\n",
      body
    ]
  end

  @doc "A port on 127.0.0.1 that nothing listens on (it was free a moment ago)."
  @spec closed_port() :: :inet.port_number()
  def closed_port do
    {:ok, listen} = :gen_tcp.listen(0, ip: {127, 0, 0, 1})
    {:ok, {_, port}} = :inet.sockname(listen)
    :gen_tcp.close(listen)
    port
  end

  defp sockname_module(:ssl), do: :ssl
  defp sockname_module(:gen_tcp), do: :inet

  # Each connection served by a process of its own, which owns its socket.
  defp accept_loop(transport, listen, serve) do
    accepted =
      if transport == :ssl, do: :ssl.transport_accept(listen), else: :gen_tcp.accept(listen)

    case accepted do
      {:ok, socket} ->
        pid = spawn(fn -> receive(do: (:go -> serve.(socket))) end)
        :ok = transport.controlling_process(socket, pid)
        send(pid, :go)
        accept_loop(transport, listen, serve)

      {:error, _closed} ->
        :ok
    end
  end

  # A client that refuses the certificate ends the handshake: nothing served.
  defp handshake(:ssl, socket), do: :ssl.handshake(socket, 10_000)
  defp handshake(:gen_tcp, socket), do: {:ok, socket}

  defp read_head(transport, socket, buffer) do
    case :binary.split(buffer, "\r\n\r\n") do
      [head, rest] ->
        {:ok, head, rest}

      [_] ->
        case transport.recv(socket, 0, 10_000) do
          {:ok, data} -> read_head(transport, socket, buffer <> data)
          error -> error
        end
    end
  end

  defp parse_head(head) do
    [line | headers] = String.split(head, "\r\n")

    headers =
      Map.new(headers, fn header ->
        [name, value] = String.split(header, ":", parts: 2)
        {String.downcase(name), String.trim(value)}
      end)

    %{line: line, headers: headers}
  end

  defp tunnel(client, %{line: "CONNECT " <> rest}, _head, _buffered) do
    [authority | _] = String.split(rest, " ")

    case connect(authority) do
      {:ok, server} ->
        :ok = :gen_tcp.send(client, "HTTP/1.1 200 Connection established\r\n\r\n")
        relay(client, server)

      {:error, reason} ->
        :gen_tcp.send(client, answer(502, "Bad Gateway", [], inspect(reason)))
        :gen_tcp.close(client)
    end
  end

  defp tunnel(client, %{line: line}, head, buffered) do
    [_method, url | _] = String.split(line, " ")
    uri = URI.parse(url)

    # Passed on as a proxy does: without its own headers.
    passed =
      for line <- String.split(head, "\r\n"), not (line =~ ~r/^proxy-/i), do: [line, "\r\n"]

    {:ok, server} = connect("#{uri.host}:#{uri.port}")
    :ok = :gen_tcp.send(server, [passed, "\r\n", buffered])
    relay(client, server)
  end

  defp connect(authority) do
    [host, port] = String.split(authority, ":")

    :gen_tcp.connect(
      String.to_charlist(host),
      String.to_integer(port),
      [mode: :binary, active: true],
      10_000
    )
  end

  defp relay(client, server) do
    :ok = :inet.setopts(client, active: true)
    relay_loop(client, server)
  end

  defp relay_loop(client, server) do
    receive do
      {:tcp, ^client, data} ->
        :gen_tcp.send(server, data)
        relay_loop(client, server)

      {:tcp, ^server, data} ->
        :gen_tcp.send(client, data)
        relay_loop(client, server)

      {:tcp_closed, _} ->
        :gen_tcp.close(client)
        :gen_tcp.close(server)
    after
      30_000 -> :ok
    end
  end
end

defmodule OpenAgentsPolicy.PrecompiledDownloadTest do
  # The precompiled path's download (Mix.OpenAgentsPolicy.Download), called
  # in this VM against servers on 127.0.0.1 (see Servers, below): a
  # CONNECT proxy, HTTPS with a test CA, a server that fails and then
  # serves, redirects from one host name to another (127.0.0.1 and
  # localhost), a server that records the headers it got, an oversized
  # body. What the download prints is captured with Mix.Shell.Process.
  # The environment variables it reads are cleared for each test (and put
  # back), so a proxy set on this machine changes nothing.
  use ExUnit.Case, async: false

  import OpenAgentsPolicy.PrecompiledDownloadTest.Servers

  alias Mix.OpenAgentsPolicy.{Download, Precompiled}

  @variables ~w(HTTPS_PROXY https_proxy HTTP_PROXY http_proxy NO_PROXY no_proxy
                HEX_CACERTS_PATH OPENAGENTS_POLICY_CACERTS_PATH OPENAGENTS_POLICY_NIF_ALLOW_HTTP
                OPENAGENTS_POLICY_NIF_BASE_URL RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH)
  @body :crypto.strong_rand_bytes(3000)

  setup_all do
    dir = Path.join(System.tmp_dir!(), "download-test-#{System.unique_integer([:positive])}")
    {ca, ca_file} = ca!(dir)
    # OTP logs each refused handshake, which these tests make, as a notice.
    {:ok, _} = Application.ensure_all_started(:ssl)
    :ok = :logger.set_application_level(:ssl, :error)

    on_exit(fn ->
      :logger.unset_application_level(:ssl)
      File.rm_rf!(dir)
    end)

    %{
      dir: dir,
      ca_file: ca_file,
      dns_cert: certificate(ca, dns: "localhost"),
      ip_cert: certificate(ca, ip: {127, 0, 0, 1}),
      other_cert: certificate(ca, dns: "other.example")
    }
  end

  setup do
    saved = Map.new(@variables, &{&1, System.get_env(&1)})
    Enum.each(@variables, &System.delete_env/1)
    Mix.shell(Mix.Shell.Process)

    on_exit(fn ->
      Mix.shell(Mix.Shell.IO)

      for {name, value} <- saved,
          do: if(value, do: System.put_env(name, value), else: System.delete_env(name))
    end)
  end

  # Download.get/2 with short retry delays, and the lines it printed.
  defp get(url, opts \\ []) do
    result = Download.get(url, Keyword.merge([retry_delay: 10], opts))
    {result, printed()}
  end

  defp printed(lines \\ []) do
    receive do
      {:mix_shell, :info, [line]} -> printed([line | lines])
    after
      0 -> Enum.reverse(lines)
    end
  end

  defp served(name) do
    receive do
      {:served, ^name, request} -> [request | served(name)]
    after
      0 -> []
    end
  end

  defp basic(userinfo), do: "Basic " <> Base.encode64(userinfo)

  describe "proxies" do
    test "an HTTPS download passes through a CONNECT proxy, whose credentials go to it alone",
         ctx do
      port = serve!(:origin, fn _, _ -> ok(@body) end, tls: ctx.dns_cert)
      ip_port = serve!(:ip_origin, fn _, _ -> ok(@body) end, tls: ctx.ip_cert)
      proxy = proxy!()
      System.put_env("HTTPS_PROXY", "http://puser:p%40ss@127.0.0.1:#{proxy}")
      System.put_env("HEX_CACERTS_PATH", ctx.ca_file)

      assert {{:ok, @body}, printed} = get("https://localhost:#{port}/artifact")

      assert printed == [
               "Downloading https://localhost:#{port}/artifact",
               "Through the proxy http://[REDACTED]@127.0.0.1:#{proxy} (HTTPS_PROXY)"
             ]

      assert_received {:proxied, %{line: "CONNECT localhost:" <> _, headers: headers}}
      assert headers["proxy-authorization"] == basic("puser:p@ss")
      assert [%{line: "GET /artifact HTTP/1.1", headers: origin}] = served(:origin)
      refute Map.has_key?(origin, "proxy-authorization")

      # An IP-address host through the tunnel: its certificate names the IP.
      assert {{:ok, @body}, _} = get("https://127.0.0.1:#{ip_port}/artifact")
      assert_received {:proxied, %{line: "CONNECT 127.0.0.1:" <> _}}
    end

    test "NO_PROXY bypasses the proxy; http_proxy carries a plain http download" do
      port = serve!(:origin, fn _, _ -> ok(@body) end)
      proxy = proxy!()
      System.put_env("http_proxy", "127.0.0.1:#{proxy}")
      System.put_env("NO_PROXY", "example.com, 127.0.0.1:1, .localhost")

      assert {{:ok, @body}, printed} = get("http://localhost:#{port}/artifact")
      assert printed == ["Downloading http://localhost:#{port}/artifact"]
      refute_received {:proxied, _}

      # 127.0.0.1:1 is another port.
      assert {{:ok, @body}, printed} = get("http://127.0.0.1:#{port}/artifact")

      assert printed == [
               "Downloading http://127.0.0.1:#{port}/artifact",
               "Through the proxy http://127.0.0.1:#{proxy} (http_proxy)"
             ]

      assert_received {:proxied, %{line: "GET http://127.0.0.1:" <> _, headers: headers}}
      refute Map.has_key?(headers, "proxy-authorization")

      System.put_env("no_proxy", "127.0.0.1:#{port}")
      System.delete_env("NO_PROXY")
      assert {{:ok, @body}, [_]} = get("http://127.0.0.1:#{port}/artifact")
      refute_received {:proxied, _}
    end

    test "a proxy that refuses the tunnel is not retried, and says how it refused", ctx do
      proxy = proxy!(answer(407, "Proxy Authentication Required", [{"content-length", 0}]))
      System.put_env("HTTPS_PROXY", "http://127.0.0.1:#{proxy}")
      System.put_env("HEX_CACERTS_PATH", ctx.ca_file)

      assert {{:error, why}, printed} = get("https://localhost:#{closed_port()}/artifact")
      assert why == "the proxy refused the tunnel: HTTP 407 Proxy Authentication Required"
      assert length(printed) == 2
      assert_received {:proxied, %{line: "CONNECT localhost:" <> _}}
      refute_received {:proxied, _}

      # A proxy this download cannot speak to is refused, credentials hidden.
      System.put_env("HTTPS_PROXY", "socks5://user:s3cret@127.0.0.1:#{proxy}")

      assert {{:error, why}, _} = get("https://localhost:#{closed_port()}/artifact")

      assert why ==
               "HTTPS_PROXY=socks5://[REDACTED]@127.0.0.1:#{proxy} is not an http:// proxy URL " <>
                 "(https:// and socks are not supported)"
    end
  end

  describe "TLS" do
    test "HTTPS from a test CA is refused without the CA bundle and accepted with HEX_CACERTS_PATH",
         ctx do
      port = serve!(:origin, fn _, _ -> ok(@body) end, tls: ctx.dns_cert)
      url = "https://localhost:#{port}/artifact"

      assert {{:error, why}, _} = get(url)
      assert why =~ "TLS unknown_ca"
      assert why =~ "HEX_CACERTS_PATH"
      assert served(:origin) == []

      System.put_env("HEX_CACERTS_PATH", ctx.ca_file)
      assert {{:ok, @body}, printed} = get(url)
      assert printed == ["Downloading #{url}"]

      System.put_env("HEX_CACERTS_PATH", Path.join(ctx.dir, "missing.pem"))
      assert {{:error, why}, _} = get(url)

      assert why ==
               "HEX_CACERTS_PATH=#{Path.join(ctx.dir, "missing.pem")} cannot be read (no such file or directory)"

      not_pem = Path.join(ctx.dir, "not.pem")
      File.write!(not_pem, "no certificate here\n")
      System.put_env("HEX_CACERTS_PATH", not_pem)
      assert {{:error, why}, _} = get(url)
      assert why == "HEX_CACERTS_PATH=#{not_pem} holds no PEM certificate"

      # The library's own setting comes first.
      System.put_env("OPENAGENTS_POLICY_CACERTS_PATH", ctx.ca_file)
      assert {{:ok, @body}, _} = get(url)
      assert length(served(:origin)) == 2
    end

    test "an IP-address base URL works when the certificate names the IP", ctx do
      port = serve!(:origin, fn _, _ -> ok(@body) end, tls: ctx.ip_cert)
      System.put_env("HEX_CACERTS_PATH", ctx.ca_file)

      assert {{:ok, @body}, ["Downloading https://127.0.0.1:" <> _]} =
               get("https://127.0.0.1:#{port}/artifact")
    end

    test "a certificate that does not name the host is refused, for a name and for an IP address",
         ctx do
      System.put_env("HEX_CACERTS_PATH", ctx.ca_file)
      other = serve!(:other, fn _, _ -> ok(@body) end, tls: ctx.other_cert)
      dns = serve!(:dns, fn _, _ -> ok(@body) end, tls: ctx.dns_cert)

      # OTP 25 alerts handshake_failure; OTP 27 and later, bad_certificate.
      assert {{:error, why}, _} = get("https://localhost:#{other}/artifact")

      assert why =~ ~r/^TLS (handshake_failure|bad_certificate)\b/ and
               why =~ "hostname_check_failed"

      assert {{:error, why}, _} = get("https://127.0.0.1:#{dns}/artifact")

      assert why =~ ~r/^TLS (handshake_failure|bad_certificate)\b/ and
               why =~ "hostname_check_failed"

      assert served(:other) == [] and served(:dns) == []
    end
  end

  describe "retries" do
    test "a server that fails twice and then serves: the download retries and says so" do
      port =
        serve!(:flaky, fn
          _, 1 -> answer(503, "Service Unavailable", [])
          _, 2 -> :close
          _, _ -> ok(@body)
        end)

      assert {{:ok, @body}, printed} = get("http://127.0.0.1:#{port}/artifact")

      assert printed == [
               "Downloading http://127.0.0.1:#{port}/artifact",
               "Download attempt 1 of 3 failed (HTTP 503 Service Unavailable); retrying in 0.01 s",
               "Download attempt 2 of 3 failed (socket_closed_remotely); retrying in 0.02 s"
             ]

      assert length(served(:flaky)) == 3
    end

    test "3 attempts at most, 1 s then 2 s apart by default: a refused connection gives up" do
      url = "http://127.0.0.1:#{closed_port()}/artifact"
      assert {{:error, why}, printed} = get(url, retry_delay: 1000)
      assert why == "econnrefused (3 attempts)"

      assert printed == [
               "Downloading #{url}",
               "Download attempt 1 of 3 failed (econnrefused); retrying in 1 s",
               "Download attempt 2 of 3 failed (econnrefused); retrying in 2 s"
             ]
    end

    test "a server that never answers is given up on at the deadline, and retried" do
      port = serve!(:silent, fn _, _ -> :hang end)
      assert {{:error, why}, printed} = get("http://127.0.0.1:#{port}/artifact", timeout: 300)
      assert why == "no complete answer within 0.3 s (3 attempts)"
      assert length(printed) == 3
      assert length(served(:silent)) == 3
    end

    test "a 404 is not retried" do
      port = serve!(:missing, fn _, _ -> answer(404, "Not Found", [{"content-length", 0}]) end)
      assert {{:error, "HTTP 404 Not Found"}, printed} = get("http://127.0.0.1:#{port}/artifact")
      assert printed == ["Downloading http://127.0.0.1:#{port}/artifact"]
      assert length(served(:missing)) == 1
    end

    test "a checksum mismatch is refused and not retried", ctx do
      port = serve!(:tampered, fn _, _ -> ok(@body) end)
      System.put_env("OPENAGENTS_POLICY_NIF_BASE_URL", "http://user:s3cret@127.0.0.1:#{port}")

      System.put_env(
        "RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH",
        Path.join(ctx.dir, "cache-mismatch")
      )

      expected = String.duplicate("0", 64)

      error =
        assert_raise Mix.Error, fn ->
          Precompiled.fetch!("artifact.so.tar.gz", expected, Path.join(ctx.dir, "work"))
        end

      assert error.message =~ "does not match the checksum file"
      assert error.message =~ "url:      http://[REDACTED]@127.0.0.1:#{port}/artifact.so.tar.gz"
      refute error.message =~ "s3cret"
      assert length(served(:tampered)) == 1
    end
  end

  describe "redirects and credentials" do
    test "a redirect across hosts over HTTPS, from an IP-address URL, checks each host's own name " <>
           "and takes no credential along",
         ctx do
      System.put_env("HEX_CACERTS_PATH", ctx.ca_file)
      # Each certificate names only its own host: a name pinned to the first
      # host would fail the second's check.
      second = serve!(:second, fn _, _ -> ok(@body) end, tls: ctx.dns_cert)

      first =
        serve!(
          :first,
          fn _, _ ->
            answer(302, "Found", [{"location", "https://localhost:#{second}/signed?sig=abc"}])
          end,
          tls: ctx.ip_cert
        )

      assert {{:ok, @body}, printed} = get("https://user:s3cret@127.0.0.1:#{first}/artifact")

      assert printed == [
               "Downloading https://[REDACTED]@127.0.0.1:#{first}/artifact",
               "Redirected to https://localhost:#{second}/signed?[REDACTED]"
             ]

      assert [%{headers: %{"authorization" => authorization}}] = served(:first)
      assert authorization == basic("user:s3cret")
      assert [%{line: "GET /signed?sig=abc HTTP/1.1", headers: headers}] = served(:second)
      refute Map.has_key?(headers, "authorization")
    end

    test "credentials are printed nowhere and stored nowhere: not in a refusal, not in the origin",
         ctx do
      tar = tar(ctx.dir, "artifact.so", "a library")

      port =
        serve!(:origin, fn %{line: line}, _ ->
          if line =~ "missing", do: answer(404, "Not Found", []), else: ok(tar)
        end)

      System.put_env("OPENAGENTS_POLICY_NIF_BASE_URL", "http://user:s3cret@127.0.0.1:#{port}/")
      System.put_env("RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH", Path.join(ctx.dir, "cache-origin"))

      # The origin is what Install prints and the build manifest records.
      {{:precompiled, origin}, _path} =
        Precompiled.fetch!("artifact.so.tar.gz", sha256(tar), Path.join(ctx.dir, "work"))

      assert origin == "http://[REDACTED]@127.0.0.1:#{port}/artifact.so.tar.gz"
      assert printed() == ["Downloading #{origin}"]

      error =
        assert_raise Mix.Error, fn ->
          Precompiled.fetch!("missing.so.tar.gz", sha256(tar), Path.join(ctx.dir, "work"))
        end

      assert error.message =~ "Downloading it failed: HTTP 404 Not Found."
      refute error.message =~ "s3cret"
      assert Enum.all?(printed(), &(not (&1 =~ "s3cret")))
      assert [%{headers: %{"authorization" => auth}}, _] = served(:origin)
      assert auth == basic("user:s3cret")
    end

    test "more than 5 redirects are refused" do
      port = serve!(:loop, fn _, n -> answer(302, "Found", [{"location", "/hop#{n}"}]) end)

      assert {{:error, "more than 5 redirects"}, printed} =
               get("http://127.0.0.1:#{port}/artifact")

      assert length(printed) == 6
      assert length(served(:loop)) == 6
    end

    test "a URL, or a redirect, that is not http(s) is refused" do
      assert {{:error, "ftp://[REDACTED]@example.com/x is not an http:// or https:// URL"}, []} =
               get("ftp://user:s3cret@example.com/x")

      port =
        serve!(:ftp, fn _, _ -> answer(302, "Found", [{"location", "ftp://example.com/x"}]) end)

      assert {{:error, "a redirect to ftp://example.com/x, which is not an http(s) URL"}, _} =
               get("http://127.0.0.1:#{port}/artifact")

      port = serve!(:nowhere, fn _, _ -> answer(302, "Found", [{"content-length", 0}]) end)

      assert {{:error, "HTTP 302 without a Location"}, _} =
               get("http://127.0.0.1:#{port}/artifact")
    end
  end

  describe "plain http" do
    test "to a host other than loopback is refused, before any connection, unless allowed" do
      # .invalid never resolves (RFC 6761): what follows the opt-in is a lookup that fails.
      assert {{:error, why}, _} = get("http://artifacts.invalid/artifact")

      assert why ==
               "plain http:// to artifacts.invalid, which is not loopback, is refused: use an https:// URL, " <>
                 "or set OPENAGENTS_POLICY_NIF_ALLOW_HTTP=1 to allow it"

      port =
        serve!(:downgrade, fn _, _ ->
          answer(302, "Found", [{"location", "http://artifacts.invalid/x"}])
        end)

      assert {{:error, ^why}, printed} = get("http://127.0.0.1:#{port}/artifact")
      assert List.last(printed) == "Redirected to http://artifacts.invalid/x"

      System.put_env("OPENAGENTS_POLICY_NIF_ALLOW_HTTP", "1")
      assert {{:error, "nxdomain"}, _} = get("http://artifacts.invalid/artifact")
    end
  end

  describe "the size cap" do
    test "64 MiB by default: a larger Content-Length is refused before its body is read" do
      port =
        serve!(:huge, fn _, _ ->
          answer(200, "OK", [{"content-length", 64 * 1024 * 1024 + 1}], "only a little")
        end)

      assert {{:error, why}, _} = get("http://127.0.0.1:#{port}/artifact")

      assert why ==
               "the download is larger than its cap of 67108864 bytes: 67108865 bytes announced"
    end

    test "a body with no length is cut off at the cap" do
      port =
        serve!(:unbounded, fn _, _ -> ["HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n", @body] end)

      assert {{:error, why}, _} = get("http://127.0.0.1:#{port}/artifact", max_bytes: 1024)
      assert why == "the download is larger than its cap of 1024 bytes: more than that was sent"

      assert {{:ok, @body}, _} =
               get("http://127.0.0.1:#{port}/artifact", max_bytes: byte_size(@body))
    end
  end

  defp tar(dir, name, content) do
    file = Path.join(dir, name <> ".tar.gz")

    :ok =
      :erl_tar.create(String.to_charlist(file), [{String.to_charlist(name), content}], [
        :compressed
      ])

    File.read!(file)
  end

  defp sha256(data), do: Mix.Tasks.Compile.OpenagentsPolicyNif.sha256(data)
end
