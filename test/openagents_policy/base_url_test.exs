defmodule OpenAgentsPolicy.BaseURLTest do
  # OPENAGENTS_POLICY_NIF_BASE_URL as users write it: each form a mirror's
  # address takes, read into the artifacts' URLs rustler_precompiled asks
  # for, and what is refused, in the library's words. The download itself,
  # from a base URL served on 127.0.0.1, is scripts/precompiled_check.sh's.
  #
  # async: false: the variable is this VM's, set by some tests.
  use ExUnit.Case, async: false

  import ExUnit.CaptureLog

  alias OpenAgentsPolicy.Native.BaseURL

  @variable "OPENAGENTS_POLICY_NIF_BASE_URL"
  @artifact "libopenagents_policy_nif-v0.1.0-nif-2.15-x86_64-unknown-linux-gnu.so.tar.gz"
  @form "write it as http(s)://host[:port][/path], with user:password@ before the host " <>
          "if the mirror needs them, and no query or fragment"

  # The artifact's URL and headers, with the variable set to `value`, as
  # rustler_precompiled builds them from the base_url native.ex gives it.
  defp artifact(value) do
    System.put_env(@variable, value)
    on_exit(fn -> System.delete_env(@variable) end)
    base_url = BaseURL.option(System.get_env(@variable), "unused: the variable is set")

    {:ok, [{@artifact, url_and_headers}]} =
      RustlerPrecompiled.nifs_from_metadata(%{
        base_url: base_url,
        basename: "openagents_policy_nif",
        version: "0.1.0",
        nif_versions: ["2.15"],
        targets: ["x86_64-unknown-linux-gnu"]
      })

    url_and_headers
  end

  test "a mirror's address with no path, or only a slash" do
    for value <- ["https://mirror.example:8443", "https://mirror.example:8443/"] do
      assert artifact(value) == {"https://mirror.example:8443/" <> @artifact, []}
    end
  end

  test "a path prefix, with or without its trailing slash" do
    for value <- ["http://127.0.0.1:8080/nif/v0.1.0", "http://127.0.0.1:8080/nif/v0.1.0/"] do
      assert artifact(value) == {"http://127.0.0.1:8080/nif/v0.1.0/" <> @artifact, []}
    end
  end

  test "credentials go as Basic authentication, never in the URL" do
    # Percent-encoded as a URL needs them: `ci@corp`, `p:ss`.
    assert artifact("https://ci%40corp:p%3Ass@mirror.example/nif") ==
             {"https://mirror.example/nif/" <> @artifact,
              [{"authorization", "Basic " <> Base.encode64("ci@corp:p:ss")}]}

    # A token as the user, no password.
    assert artifact("https://t0ken@mirror.example") ==
             {"https://mirror.example/" <> @artifact,
              [{"authorization", "Basic " <> Base.encode64("t0ken:")}]}
  end

  test "rustler_precompiled fetches the artifact from an address with no path, credentials sent as a header" do
    # Its cache (where it writes what it fetched) of this test's own,
    # outside the checkout.
    cache = Path.join(System.tmp_dir!(), "base_url_test-#{System.unique_integer([:positive])}")
    on_exit(fn -> File.rm_rf!(cache) end)
    {:ok, listen} = :gen_tcp.listen(0, [:binary, ip: {127, 0, 0, 1}, active: false])
    {:ok, port} = :inet.port(listen)
    test = self()
    served = spawn_link(fn -> send(test, {:request, serve_once(listen, "the artifact")}) end)
    on_exit(fn -> Process.exit(served, :kill) end)
    System.put_env("RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH", cache)
    on_exit(fn -> System.delete_env("RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH") end)

    url = artifact("http://ci:s3cret@127.0.0.1:#{port}")

    # Its own log, at every level, says where it fetched from: never with
    # the credentials.
    Logger.configure(level: :debug)
    on_exit(fn -> Logger.configure(level: Application.get_env(:logger, :level, :debug)) end)

    log =
      capture_log(fn ->
        assert [%{lib_name: @artifact, checksum: checksum}] =
                 RustlerPrecompiled.download_nif_artifacts_with_checksums!([{@artifact, url}],
                   max_retries: 0
                 )

        send(test, {:checksum, checksum})
      end)

    assert log =~ "http://127.0.0.1:#{port}/#{@artifact}"
    refute log =~ "s3cret"
    assert_received {:checksum, checksum}

    assert checksum == Base.encode16(:crypto.hash(:sha256, "the artifact"), case: :lower)
    assert_receive {:request, request}, 5_000
    assert request =~ ~r{\AGET /#{Regex.escape(@artifact)} HTTP/1.1\r\n}
    assert request =~ ~r{\r\nauthorization: Basic #{Base.encode64("ci:s3cret")}\r\n}i
  end

  # One HTTP/1.1 request read off `listen`, answered 200 with `body`; the
  # request's line and headers returned.
  defp serve_once(listen, body) do
    {:ok, socket} = :gen_tcp.accept(listen, 10_000)
    request = read_head(socket, "")

    :ok =
      :gen_tcp.send(
        socket,
        "HTTP/1.1 200 OK\r\ncontent-length: #{byte_size(body)}\r\nconnection: close\r\n\r\n" <>
          body
      )

    :gen_tcp.close(socket)
    request
  end

  defp read_head(socket, read) do
    if read =~ "\r\n\r\n" do
      read
    else
      {:ok, more} = :gen_tcp.recv(socket, 0, 10_000)
      read_head(socket, read <> more)
    end
  end

  test "unset: the default, the GitHub release" do
    assert BaseURL.option(nil, "https://github.com/o/r/releases/download/v1") ==
             "https://github.com/o/r/releases/download/v1"
  end

  test "anything else is refused, naming the variable and never its credentials" do
    for {value, shown, why} <- [
          {"", "", "is empty (unset it for the GitHub release)"},
          {"mirror.example:8443", "mirror.example:8443",
           "does not start with http:// or https://"},
          {"ftp://mirror.example/nif", "ftp://mirror.example/nif",
           "does not start with http:// or https://"},
          {"https:///nif", "https:///nif", "names no host"},
          {"https://mirror.example/nif?v=1", "https://mirror.example/nif?v=1", "has a query"},
          {"https://mirror.example/nif?", "https://mirror.example/nif?", "has a query"},
          {"https://mirror.example/nif#v1", "https://mirror.example/nif#v1", "has a fragment"},
          {"https://mirror example/nif", "https://mirror example/nif", "is not a URL"},
          {"https://ci:s3cret@mirror.example/nif?v=1",
           "https://[credentials]@mirror.example/nif?v=1", "has a query"},
          {"https://ci:s3 cret@mirror.example/nif", "https://[credentials]@mirror.example/nif",
           "is not a URL"}
        ] do
      message = "#{@variable}=#{shown} #{why}: #{@form}"
      assert BaseURL.parse(value) == {:error, message}
      assert_raise ArgumentError, message, fn -> BaseURL.option(value, "unused") end
      refute message =~ "s3"
    end
  end
end
