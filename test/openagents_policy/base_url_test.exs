defmodule OpenAgentsPolicy.BaseURLTest do
  # OPENAGENTS_POLICY_NIF_BASE_URL as users write it: each form a mirror's
  # address takes, read into the artifacts' URLs rustler_precompiled asks
  # for, and what is refused, in the library's words. Downloads go to
  # servers this test starts on 127.0.0.1, one of them redirecting to the
  # other (another origin: `localhost` and another port).
  #
  # async: false: the variables are this VM's, set by some tests.
  use ExUnit.Case, async: false

  import ExUnit.CaptureLog

  alias OpenAgentsPolicy.Native.BaseURL

  @variable "OPENAGENTS_POLICY_NIF_BASE_URL"
  @artifact "libopenagents_policy_nif-v0.1.0-nif-2.15-x86_64-unknown-linux-gnu.so.tar.gz"
  @form "write it as http(s)://host[:port][/path], with no credentials, query or fragment"
  @hidden "#{@variable} (its value not shown)"
  @credentials "has credentials, which rustler_precompiled would send on to any host " <>
                 "the mirror redirects to"
  @instead "for a mirror that needs credentials, fetch the artifacts with a tool that " <>
             "keeps them to the mirror (such as `curl --fail --netrc`) into the directory " <>
             "RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH names, and leave #{@variable} unset " <>
             "(guides/releases.md, \"Variables\")"

  # A refusal's words: the variable as shown, why, the form to write, and
  # for credentials what to use instead.
  defp message(shown, @credentials), do: "#{shown} #{@credentials}: #{@form}; #{@instead}"
  defp message(shown, why), do: "#{shown} #{why}: #{@form}"

  # Everything logged is captured, at every level.
  setup do
    Logger.configure(level: :debug)
    on_exit(fn -> Logger.configure(level: Application.get_env(:logger, :level, :debug)) end)
  end

  # The artifact's URL and headers, with the variable set to `value`, as
  # rustler_precompiled builds them from the base_url native.ex gives it.
  defp artifact(value) do
    System.put_env(@variable, value)
    on_exit(fn -> System.delete_env(@variable) end)
    artifact(value, BaseURL.option(System.get_env(@variable), "unused: the variable is set"))
  end

  # The same from `base_url` as given, such as the `{module, function}`
  # rustler_precompiled keeps in its metadata file and calls again later
  # (`mix rustler_precompiled.download`), with the variable set to `value`.
  defp artifact(value, base_url) do
    System.put_env(@variable, value)
    on_exit(fn -> System.delete_env(@variable) end)

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

  # The artifact downloaded by rustler_precompiled, the variable set to
  # `value`, into a cache of this test's own (outside the checkout): its
  # checksum, and everything logged meanwhile.
  defp download(value) do
    cache = Path.join(System.tmp_dir!(), "base_url_test-#{System.unique_integer([:positive])}")
    on_exit(fn -> File.rm_rf!(cache) end)
    System.put_env("RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH", cache)
    on_exit(fn -> System.delete_env("RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH") end)

    with_log(fn ->
      [%{lib_name: @artifact, checksum: checksum}] =
        RustlerPrecompiled.download_nif_artifacts_with_checksums!([{@artifact, artifact(value)}],
          max_retries: 0
        )

      checksum
    end)
  end

  # A server on 127.0.0.1 that answers one request with `response` (a
  # function of nothing, or the text itself), and sends this test
  # `{ref, request}`: the request's line and headers, or `:nothing` when
  # none came within a second. Its port and `ref`.
  defp server(response) do
    {:ok, listen} = :gen_tcp.listen(0, [:binary, ip: {127, 0, 0, 1}, active: false])
    {:ok, port} = :inet.port(listen)
    {test, ref} = {self(), make_ref()}
    served = spawn_link(fn -> send(test, {ref, serve_once(listen, response)}) end)
    on_exit(fn -> Process.exit(served, :kill) end)
    {port, ref}
  end

  defp serve_once(listen, response) do
    case :gen_tcp.accept(listen, 1_000) do
      {:ok, socket} ->
        request = read_head(socket, "")
        :ok = :gen_tcp.send(socket, response)
        :gen_tcp.close(socket)
        request

      {:error, :timeout} ->
        :nothing
    end
  end

  defp read_head(socket, read) do
    if read =~ "\r\n\r\n" do
      read
    else
      {:ok, more} = :gen_tcp.recv(socket, 0, 10_000)
      read_head(socket, read <> more)
    end
  end

  defp ok(body),
    do:
      "HTTP/1.1 200 OK\r\ncontent-length: #{byte_size(body)}\r\nconnection: close\r\n\r\n" <> body

  defp found(location),
    do:
      "HTTP/1.1 302 Found\r\nlocation: #{location}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"

  # A mirror on 127.0.0.1 that redirects every artifact to another origin,
  # `localhost` on another port, which serves `body`: the mirror's port and
  # the two servers' refs.
  defp redirecting_mirror(body) do
    {elsewhere, elsewhere_ref} = server(ok(body))
    {mirror, mirror_ref} = server(found("http://localhost:#{elsewhere}/elsewhere/#{@artifact}"))
    {mirror, mirror_ref, elsewhere_ref}
  end

  defp sha256(body), do: Base.encode16(:crypto.hash(:sha256, body), case: :lower)

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

  test "rustler_precompiled fetches the artifact from an address with no path, with no credentials" do
    {port, ref} = server(ok("the artifact"))

    {checksum, log} = download("http://127.0.0.1:#{port}")

    assert checksum == sha256("the artifact")
    assert log =~ "Downloading NIF from http://127.0.0.1:#{port}/#{@artifact}"
    assert_receive {^ref, request}, 5_000
    assert request =~ ~r{\AGET /#{Regex.escape(@artifact)} HTTP/1.1\r\n}
    refute request =~ ~r{\r\nauthorization:}i
  end

  test "a redirect to another origin is followed, and no credentials go there" do
    {mirror, mirror_ref, elsewhere_ref} = redirecting_mirror("the artifact, elsewhere")

    {checksum, _log} = download("http://127.0.0.1:#{mirror}/mirror")

    assert checksum == sha256("the artifact, elsewhere")
    assert_receive {^mirror_ref, asked}, 5_000
    assert asked =~ ~r{\AGET /mirror/#{Regex.escape(@artifact)} HTTP/1.1\r\n}
    assert_receive {^elsewhere_ref, redirected}, 5_000
    assert redirected =~ ~r{\AGET /elsewhere/#{Regex.escape(@artifact)} HTTP/1.1\r\n}
    refute redirected =~ ~r{\r\nauthorization:}i
  end

  test "credentials are refused before any request, never shown" do
    {mirror, mirror_ref, elsewhere_ref} = redirecting_mirror("the artifact, elsewhere")

    # Plain, percent-encoded (`ci@corp`, `p:s3cret`), a token as the user.
    for userinfo <- ["ci:s3cret", "ci%40corp:p%3As3cret", "s3cret"] do
      value = "http://#{userinfo}@127.0.0.1:#{mirror}/mirror"
      message = message(@hidden, @credentials)

      {error, log} =
        with_log(fn ->
          assert_raise ArgumentError, message, fn -> BaseURL.option(value, "unused") end
          assert_raise ArgumentError, message, fn -> artifact(value, {BaseURL, :artifact_url}) end
          assert_raise ArgumentError, message, fn -> download(value) end
        end)

      refute Exception.message(error) =~ "s3"
      refute log =~ "s3"
    end

    # Neither the mirror nor the origin it redirects to was asked anything.
    assert_receive {^mirror_ref, :nothing}, 5_000
    assert_receive {^elsewhere_ref, :nothing}, 5_000
  end

  test "a secret in a query or a fragment is refused before any request, never shown" do
    {mirror, mirror_ref, elsewhere_ref} = redirecting_mirror("the artifact, elsewhere")
    base = "http://127.0.0.1:#{mirror}/mirror"

    for {value, why} <- [
          {base <> "?X-Amz-Signature=s3cret&token=s3cret", "has a query"},
          {base <> "#s3cret", "has a fragment"},
          {"http://ci:s3cret@127.0.0.1:#{mirror}/mirror?token=s3cret", @credentials},
          # Not URLs: a space in the password, in the host.
          {"http://ci:s3 cret@127.0.0.1:#{mirror}/mirror", "is not a URL"},
          {"http://127.0.0.1 :#{mirror}/mirror?token=s3cret", "is not a URL"},
          # Read as a host `s3cret` with a query, or as a host and port
          # `ci:1234` with a fragment: the user's secret either way.
          {"http://s3cret?x@127.0.0.1:#{mirror}/mirror", "has a query"},
          {"http://ci:1234#s3cret@127.0.0.1:#{mirror}/mirror", "has a fragment"}
        ] do
      message = message(@hidden, why)

      {error, log} =
        with_log(fn ->
          assert_raise ArgumentError, message, fn -> BaseURL.option(value, "unused") end
          assert_raise ArgumentError, message, fn -> artifact(value, {BaseURL, :artifact_url}) end
          assert_raise ArgumentError, message, fn -> download(value) end
        end)

      refute Exception.message(error) =~ "s3"
      refute Exception.message(error) =~ "1234"
      refute log =~ "s3"
    end

    assert_receive {^mirror_ref, :nothing}, 5_000
    assert_receive {^elsewhere_ref, :nothing}, 5_000
  end

  test "unset: rustler_precompiled asks the GitHub release; set but empty is refused" do
    System.delete_env(@variable)
    release = "https://github.com/o/r/releases/download/v1"

    {:ok, [{@artifact, url}]} =
      RustlerPrecompiled.nifs_from_metadata(%{
        base_url: BaseURL.option(System.get_env(@variable), release),
        basename: "openagents_policy_nif",
        version: "0.1.0",
        nif_versions: ["2.15"],
        targets: ["x86_64-unknown-linux-gnu"]
      })

    assert url in [release <> "/" <> @artifact, {release <> "/" <> @artifact, []}]
    message = message(@hidden, "is empty (unset it for the GitHub release)")
    assert_raise ArgumentError, message, fn -> BaseURL.option("", release) end
  end

  test "anything else is refused, naming the variable and why, none of its value" do
    for {value, why} <- [
          {"mirror.example:8443", "does not start with http:// or https://"},
          {"ftp://mirror.example/nif", "does not start with http:// or https://"},
          {"https:///nif", "names no host"},
          {"https://mirror example/nif", "is not a URL"},
          {"https://mirror.example/nif?v=1", "has a query"},
          {"https://mirror.example/nif?", "has a query"},
          {"https://mirror.example/nif#v1", "has a fragment"},
          {"https://@mirror.example/nif", @credentials},
          {"ftp://ci:s3cret@mirror.example/nif", "does not start with http:// or https://"},
          # A secret however written: percent-encoded, behind a fullwidth
          # at sign, on a line of its own.
          {"https://user:s3cretpw%40mirror.example", "is not a URL"},
          {"https://ci%3As3cret@mirror.example/nif", @credentials},
          {"https://user:s3cret\uFF20mirror.example/nif", "is not a URL"},
          {"https://mirror.example/nif\ns3cret: forged log line", "is not a URL"},
          {"https://mirror.example/nif?token=s3cret%0a", "has a query"}
        ] do
      message = message(@hidden, why)
      assert BaseURL.parse(value) == {:error, message}, inspect(value)
      assert_raise ArgumentError, message, fn -> BaseURL.option(value, "unused") end
      refute message =~ "s3" or message =~ "mirror.example" or message =~ "\n"
    end
  end
end
