defmodule Mix.OpenAgentsPolicy.Precompiled do
  @moduledoc """
  The precompiled path: which artifact this VM takes, and fetching,
  verifying, caching and extracting it.

  The checksum file (`checksum-Elixir.OpenAgentsPolicy.Native.exs` in the
  project root, which the package carries and a checkout does not) is read
  as data, one literal map, never evaluated. The artifact is taken from the
  cache directory when its SHA-256 is the listed one (checked on every cache
  hit), else downloaded (by `Mix.OpenAgentsPolicy.Download`: proxies, a CA
  bundle, retries, redirects) and checked before it is cached. Only then is
  the one NIF library in it extracted, into the run's work directory. Every
  URL it prints or returns (the origin the build manifest records) is
  redacted: no credential in it is shown or stored.

  Owns the checksum file, the cache and the extraction. Absent: the
  transfer itself (`Mix.OpenAgentsPolicy.Download`), the target triple (`Mix.OpenAgentsPolicy.Target`), whether a
  source build is wanted instead (`Mix.OpenAgentsPolicy.Source`), and
  whether the NIF library loads (the install's load check). Every refusal
  installs nothing and names the ways out.
  """

  alias Mix.OpenAgentsPolicy.{Cache, Download, Source, Target}
  alias Mix.Tasks.Compile.OpenagentsPolicyNif, as: Nif

  @checksum_file "checksum-Elixir.OpenAgentsPolicy.Native.exs"

  @typedoc "An artifact's file name, e.g. `libopenagents_policy_nif-v0.1.0-nif-2.15-<triple>.so.tar.gz`."
  @type artifact :: String.t()

  @doc """
  The artifact this VM takes and its expected SHA-256 (hex), when the
  checksum file lists one: for this triple, the highest NIF version the
  file lists that this VM loads (same major version, minor no higher than
  the VM's). Else why not, for the error that names every source.
  """
  @spec choose(Path.t()) :: {:ok, artifact(), String.t()} | {:unavailable, String.t()}
  def choose(root) do
    path = Path.join(root, @checksum_file)

    if File.regular?(path) do
      checksums = read_checksums!(path)
      version = Mix.Project.config()[:version]
      triple = Target.triple()
      [major, minor] = nif_version(List.to_string(:erlang.system_info(:nif_version)))
      prefix = "lib#{Nif.crate()}-v#{version}-nif-"
      suffix = "-#{triple}.so.tar.gz"

      candidates =
        for {artifact, digest} <- checksums,
            String.starts_with?(artifact, prefix) and String.ends_with?(artifact, suffix),
            nif =
              artifact |> String.replace_prefix(prefix, "") |> String.replace_suffix(suffix, ""),
            [^major, m] <- [nif_version(nif)],
            m <= minor,
            do: {m, artifact, digest}

      case Enum.max(candidates, fn -> nil end) do
        {_m, artifact, "sha256:" <> digest} ->
          {:ok, artifact, digest}

        nil ->
          {:unavailable,
           "#{@checksum_file} lists no artifact for target #{triple} and NIF version " <>
             "#{major}.#{minor} (expected a file named #{prefix}<2.15 to #{major}.#{minor}>#{suffix})"}
      end
    else
      {:unavailable, "there is no #{@checksum_file} (a checkout of the repository has none)"}
    end
  end

  defp nif_version(text) do
    case Regex.run(~r/^(\d+)\.(\d+)$/, text) do
      [_, major, minor] -> [String.to_integer(major), String.to_integer(minor)]
      nil -> [:none, :none]
    end
  end

  # The checksum file as data: one literal map of file name to
  # "sha256:<64 hex digits>", parsed and never evaluated.
  defp read_checksums!(path) do
    refuse = fn why ->
      Mix.raise("""
      #{path} is not a checksum file (#{why}): it must be a literal map of file
      name to "sha256:<hex>", as make precompiled writes it. Nothing was installed.
      #{Source.ways_out()}
      """)
    end

    case Code.string_to_quoted(File.read!(path)) do
      {:ok, {:%{}, _, pairs}} ->
        Map.new(pairs, fn
          {file, "sha256:" <> hex = digest} when is_binary(file) ->
            if hex =~ ~r/^[0-9a-f]{64}$/,
              do: {file, digest},
              else: refuse.("bad digest for #{file}")

          other ->
            refuse.("unexpected entry #{Macro.to_string(other)}")
        end)

      {:ok, _other} ->
        refuse.("not a literal map")

      {:error, _} ->
        refuse.("not valid Elixir syntax")
    end
  end

  defp cache_dir, do: Cache.dir()

  defp base_url do
    System.get_env("OPENAGENTS_POLICY_NIF_BASE_URL") ||
      Application.get_env(:openagents_policy, :nif_base_url) ||
      Mix.Project.config()[:nif_base_url] ||
      Mix.raise("no base URL for precompiled NIFs: set OPENAGENTS_POLICY_NIF_BASE_URL")
  end

  @doc """
  The NIF library of `artifact` (expected digest `expected`), extracted
  into `work`: from the cache when the cached artifact has that digest,
  else downloaded, checked and cached first. Raises, installing nothing,
  on any mismatch or failed download.
  """
  @spec fetch!(artifact(), String.t(), Path.t()) :: {{:precompiled, String.t()}, Path.t()}
  def fetch!(artifact, expected, work) do
    url = String.trim_trailing(base_url(), "/") <> "/" <> artifact
    cache = Cache.dir!()
    cached = Path.join(cache, artifact)

    tar =
      with {:ok, data} <- Cache.read!(cache, artifact),
           ^expected <- Nif.sha256(data) do
        data
      else
        other ->
          if is_binary(other) do
            Mix.shell().info(
              "The cached #{cached} has digest #{other}, not #{expected}: downloading it again"
            )

            File.rm(cached)
          end

          data = download!(url, artifact, expected)
          actual = Nif.sha256(data)

          if actual != expected do
            refuse!(artifact, """
            The downloaded artifact does not match the checksum file.
                url:      #{Download.redact(url)}
                expected: sha256:#{expected}
                actual:   sha256:#{actual}
            """)
          end

          Cache.put!(cache, artifact, data)
          data
      end

    library = String.replace_suffix(artifact, ".tar.gz", "")
    library_chars = String.to_charlist(library)

    case :erl_tar.extract({:binary, tar}, [:compressed, :memory]) do
      {:ok, [{name, content}]} when name == library or name == library_chars ->
        File.mkdir_p!(work)
        path = Path.join(work, library)
        File.write!(path, content)
        {{:precompiled, Download.redact(url)}, path}

      other ->
        refuse!(
          artifact,
          "The artifact #{cached} does not hold the one file #{library}: #{inspect(other, limit: 5)}\n"
        )
    end
  end

  defp download!(url, artifact, expected) do
    case Download.get(url) do
      {:ok, data} ->
        data

      {:error, why} ->
        refuse!(artifact, """
        Downloading it failed: #{why}.
            url:      #{Download.redact(url)}
            expected: sha256:#{expected}
            actual:   (nothing downloaded)
        A machine without network access builds from the cache directory
        (#{cache_dir()}, RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH) once it holds the file.
        """)
    end
  end

  defp refuse!(artifact, why) do
    Mix.raise("""
    The precompiled NIF #{artifact} was refused, and nothing was installed.
    #{why}\
    #{Source.ways_out()}
    """)
  end
end
