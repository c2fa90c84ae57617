defmodule Mix.Tasks.OpenagentsPolicy.Gate do
  @shortdoc "Refuses a candidate whose decisions widen, unless accepted by its digest"
  @moduledoc """
  A release builder's gate, run before any node is touched: the deployed
  release's decision document against the candidate's
  (`OpenAgentsPolicy.Decisions.diff/3`). A widening is refused until it is
  accepted by the candidate's decision digest (the SHA-256 of its document,
  lowercase hex), so whoever accepts it accepts exactly what ships.

      mix openagents_policy.gate DEPLOYED CANDIDATE [--accept DIGEST] [--format markdown|json]

  Each argument is a JSON file; or a directory holding, looked up in this
  order, `lib/openagents_policy-<vsn>/priv/decisions.json` (a built release),
  `deps/openagents_policy/priv/decisions.json` (a host project) or
  `priv/decisions.json` (the package, a checkout); or a tarball (`.tar`,
  `.tar.gz`, `.tgz`): a release's, with that `lib/` member, or a Hex
  package's, whose `contents.tar.gz` carries `priv/decisions.json`. A document
  over 1 MiB (the diff's own limit) is refused unread. Its version comes from
  `openagents_policy-<vsn>` or Hex metadata, else it is `null`.

  Exits 0 when nothing widens, or the widening is accepted by `--accept`
  naming the candidate's whole digest; 1 when a widening is not accepted
  (stderr says `--accept <digest>`); 2 when an argument cannot be found,
  read or diffed (it is named): never "no changes".

  `--format markdown` (the default) prints the diff's Markdown and a verdict;
  `--format json` a receipt of at most 64 KiB, naming no path or host:
  `verdict`, each side's `digest` and `version`, `counts` per class, the
  first 32 `changes` (widening first, `says` cut to 128 bytes), `left_out`.

      mix openagents_policy.gate "$DEPLOYED" _build/prod/rel/app --format json > receipt.json

  Absent by design: reading a running node, and any record of acceptances.
  """
  use Mix.Task

  @requirements ["compile"]
  @limit 1024 * 1024
  @app "openagents_policy"
  @doc_path "priv/decisions.json"
  @vsn "(\\d+\\.\\d+\\.\\d+[0-9A-Za-z.+-]{0,48})"
  @release_member ~r{^(?:\./)?lib/openagents_policy-#{@vsn}/priv/decisions\.json$}
  @classes [:widens, :narrows, :changes]

  @impl true
  @spec run([String.t()]) :: :ok
  def run(args) do
    {opts, paths, invalid} = OptionParser.parse(args, strict: [accept: :string, format: :string])
    format = opts[:format] || "markdown"

    unless invalid == [] and length(paths) == 2 and format in ["markdown", "json"],
      do: fail(2, "usage: DEPLOYED CANDIDATE [--accept DIGEST] [--format markdown|json]")

    [deployed, candidate] =
      Enum.zip_with(paths, ["deployed", "candidate"], fn path, side ->
        case locate(path) do
          {:ok, bytes, vsn} -> %{bytes: bytes, version: vsn, digest: digest(bytes)}
          {:error, why} -> fail(2, "#{side} (#{path}): #{why}")
        end
      end)

    changes = diff!(deployed, candidate, :changes, paths)
    counts = Map.new(@classes, fn class -> {class, Enum.count(changes, &(&1.class == class))} end)
    accepted? = opts[:accept] == candidate.digest

    verdict =
      cond do
        counts.widens == 0 -> "pass"
        accepted? -> "accepted"
        true -> "refused"
      end

    if format == "json" do
      Mix.shell().info(receipt(verdict, deployed, candidate, counts, changes))
    else
      Mix.shell().info(String.trim_trailing(diff!(deployed, candidate, :markdown, paths)))
      tally = Enum.map_join(@classes, ", ", &"#{counts[&1]} #{&1}")
      Mix.shell().info("\ngate: #{verdict} (#{tally}); candidate #{candidate.digest}")
    end

    if opts[:accept] && !accepted?,
      do: Mix.shell().error("--accept #{inspect(opts[:accept])} is not the candidate's digest")

    if verdict == "refused",
      do:
        fail(1, "the candidate widens #{counts.widens}; to accept: --accept #{candidate.digest}")

    :ok
  end

  @spec fail(1 | 2, String.t()) :: no_return()
  defp fail(status, message) do
    Mix.shell().error("openagents_policy.gate: " <> message)
    exit({:shutdown, status})
  end

  defp digest(bytes), do: Base.encode16(:crypto.hash(:sha256, bytes), case: :lower)

  defp diff!(deployed, candidate, format, [old, new]) do
    case OpenAgentsPolicy.Decisions.diff(deployed.bytes, candidate.bytes, format: format) do
      {:ok, answer} -> answer
      {:error, {_kind, :old, why}} -> fail(2, "deployed (#{old}): #{why}")
      {:error, {_kind, :new, why}} -> fail(2, "candidate (#{new}): #{why}")
      {:error, {_kind, nil, why}} -> fail(2, why)
    end
  end

  # The document a path holds, in the moduledoc's order, and its version.
  defp locate(path) do
    cond do
      File.dir?(path) -> in_dir(path)
      String.ends_with?(path, [".tar", ".tar.gz", ".tgz"]) -> in_tar(path)
      true -> with {:ok, bytes} <- read_file(path), do: {:ok, bytes, nil}
    end
  end

  defp in_dir(dir) do
    lib = with {:ok, names} <- File.ls(Path.join(dir, "lib")), do: names, else: (_ -> [])

    releases =
      for name <- Enum.sort(lib),
          [_, vsn] <- [Regex.run(~r/^#{@app}-#{@vsn}$/, name)],
          do: {Path.join([dir, "lib", name]), vsn}

    roots = releases ++ [{Path.join([dir, "deps", @app]), nil}, {dir, nil}]

    case Enum.filter(roots, fn {root, _} -> File.exists?(Path.join(root, @doc_path)) end) do
      [{_, a}, {_, b} | _] when is_binary(a) and is_binary(b) ->
        {:error, "two #{@app} in lib/"}

      [] ->
        {:error, "no lib/#{@app}-<vsn>/, deps/#{@app}/ nor #{@doc_path} in it"}

      [{root, vsn} | _] ->
        with {:ok, bytes} <- read_file(Path.join(root, @doc_path)),
             do: {:ok, bytes, vsn || version(read_file(Path.join(root, "hex_metadata.config")))}
    end
  end

  # At most @limit bytes of a regular file; a larger one is refused unread.
  defp read_file(path) do
    with {:ok, %{type: :regular, size: size}} when size <= @limit <- File.stat(path),
         {:ok, bytes} when is_binary(bytes) and byte_size(bytes) <= @limit <-
           File.open(path, [:read, :binary], &IO.binread(&1, @limit + 1)) do
      {:ok, bytes}
    else
      {:ok, :eof} -> {:ok, ""}
      {:ok, %File.Stat{type: :regular, size: size}} -> too_large(size)
      {:ok, %File.Stat{type: type}} -> {:error, "not a file, a directory or a tarball (#{type})"}
      {:ok, bytes} -> too_large(byte_size(bytes))
      {:error, reason} -> {:error, "#{path}: #{:file.format_error(reason)}"}
    end
  end

  defp too_large(size), do: {:error, "#{size} bytes, over the limit of #{@limit} bytes (1 MiB)"}

  # A release's member; or a Hex package's contents.tar.gz (at most 8 MiB, as
  # Hex has it, inflated in memory up to 64 MiB) and its metadata.config.
  defp in_tar(path) do
    with {:ok, members} <- table(path) do
      case Enum.find(Map.keys(members), &Regex.match?(@release_member, &1)) do
        nil when is_map_key(members, "contents.tar.gz") ->
          with {:ok, gz} <- member(path, members, "contents.tar.gz", 8 * 1024 * 1024),
               {:ok, tar} <- gunzip(gz, 64 * 1024 * 1024),
               {:ok, inner} <- table({:binary, tar}),
               {:ok, bytes} <- member({:binary, tar}, inner, @doc_path) do
            from_name = capture(~r/^#{@app}-#{@vsn}\.tar$/, Path.basename(path))
            {:ok, bytes, version(member(path, members, "metadata.config", 65_536)) || from_name}
          end

        nil ->
          {:error, "a tarball holding neither a release's #{@app} nor a Hex package"}

        name ->
          with {:ok, bytes} <- member(path, members, name),
               do: {:ok, bytes, capture(@release_member, name)}
      end
    end
  end

  # The regular members of a tarball, name => size. A path is read through
  # gzip, which passes a plain tar; a binary is a plain tar.
  defp table(source) do
    case :erl_tar.table(source, [:verbose | compressed(source)]) do
      {:ok, rows} ->
        {:ok, for({name, :regular, size, _, _, _, _} <- rows, into: %{}, do: {"#{name}", size})}

      {:error, reason} ->
        {:error, "not a readable tarball: #{:erl_tar.format_error(reason)}"}
    end
  end

  defp compressed(source), do: if(match?({:binary, _}, source), do: [], else: [:compressed])

  # One member, in memory, when its size is within `limit`.
  defp member(source, members, name, limit \\ @limit) do
    files = [:memory, {:files, [to_charlist(name)]} | compressed(source)]

    with size when is_integer(size) <- members[name] || {:error, "the tarball has no #{name}"},
         true <- size <= limit || {:error, "#{name}: #{size} bytes, over the limit of #{limit}"},
         {:ok, [{_, bytes}]} <- :erl_tar.extract(source, files) do
      {:ok, bytes}
    else
      {:error, why} when is_binary(why) -> {:error, why}
      other -> {:error, "#{name} could not be read: #{inspect(other)}"}
    end
  end

  # Inflates gzip, refusing past `limit` bytes as it goes.
  defp gunzip(gz, limit) do
    z = :zlib.open()
    :ok = :zlib.inflateInit(z, 31)
    inflate(z, :zlib.safeInflate(z, gz), [], limit)
  rescue
    ErlangError -> {:error, "contents.tar.gz is not gzip"}
  end

  defp inflate(z, {status, out}, acc, limit) do
    acc = [acc | out]

    cond do
      IO.iodata_length(acc) > limit -> {:error, "contents.tar.gz inflates past #{limit} bytes"}
      status == :finished -> {:ok, IO.iodata_to_binary(acc)}
      true -> inflate(z, :zlib.safeInflate(z, []), acc, limit)
    end
  end

  defp version({:ok, meta}), do: capture(~r/\{<<"version">>,\s*<<"#{@vsn}">>\}/, meta)
  defp version(_none), do: nil

  defp capture(regex, text), do: with([_, found] <- Regex.run(regex, text), do: found)

  # The receipt, written by hand (a host may lack Jason): at most 32 changes
  # of 3 strings of at most 128 bytes, each escaped to at most 6 times that.
  defp receipt(verdict, deployed, candidate, counts, changes) do
    ordered = Enum.sort_by(changes, &Enum.find_index(@classes, fn c -> c == &1.class end))

    side =
      &obj(digest: str(&1.digest), version: if(&1.version, do: str(&1.version), else: "null"))

    listed =
      for c <- Enum.take(ordered, 32),
          do: obj(class: str("#{c.class}"), table: str(cut(c.table)), says: str(cut(c.says)))

    IO.iodata_to_binary(
      obj(
        verdict: str(verdict),
        deployed: side.(deployed),
        candidate: side.(candidate),
        counts: obj(for(class <- @classes, do: {class, "#{counts[class]}"})),
        changes: [?[, Enum.intersperse(listed, ?,), ?]],
        left_out: "#{max(length(changes) - 32, 0)}"
      )
    )
  end

  defp obj(pairs),
    do: [?{, Enum.intersperse(for({k, v} <- pairs, do: [str("#{k}"), ?:, v]), ?,), ?}]

  defp str(s) do
    [?", Regex.replace(~r/["\\\x00-\x1f]/, s, &escape/1), ?"]
  end

  defp escape(<<c>>) when c in [?", ?\\], do: <<?\\, c>>
  defp escape(<<c>>), do: "\\u00" <> Base.encode16(<<c>>)

  # At most 128 bytes, cut on a UTF-8 boundary and marked with an ellipsis.
  defp cut(s) when byte_size(s) <= 128, do: s
  defp cut(s), do: valid_prefix(binary_part(s, 0, 125)) <> "…"

  defp valid_prefix(b),
    do: if(String.valid?(b), do: b, else: valid_prefix(binary_part(b, 0, byte_size(b) - 1)))
end
