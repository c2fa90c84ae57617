defmodule Mix.Tasks.OpenagentsPolicy.Gate do
  @shortdoc "Refuses a candidate unless every change narrows, or it is accepted by its digest"
  @moduledoc """
  A release builder's gate, run before any node is touched: the deployed
  release's decision document against the candidate's
  (`OpenAgentsPolicy.Decisions.diff/3`). It passes only when every change
  narrows, or is a change of words that decides nothing; anything else is
  refused until accepted by the candidate's decision digest (the SHA-256 of
  its document, lowercase hex), so whoever accepts it accepts exactly what
  ships.

      mix openagents_policy.gate DEPLOYED CANDIDATE [--accept DIGEST] [--format markdown|json]

  Each argument is a JSON file, a directory holding one library (a release,
  a host project, a checkout) or a tarball (a release's, a Hex package's),
  read as a stream within a budget and never extracted. Exits 0 on `pass`
  or an accepted digest, 1 when refused (stderr says `--accept <digest>`),
  2 when an argument cannot be found, read or diffed: never "no changes".
  Its inputs, exits and JSON receipt: [Deploying](deploying.md), "Before
  any node is touched"; its budget: [Reliability](reliability.md).

  Absent by design: reading a running node, and any record of acceptances.
  """
  use Mix.Task

  @requirements ["compile"]
  @limit 1024 * 1024
  @app "openagents_policy"
  @doc_path "priv/decisions.json"
  @vsn ~r/^\d+\.\d+\.\d+[0-9A-Za-z.+-]*$/
  @passing [:narrows, :words]
  @classes [:widens, :removed, :unclassed, :changes, :narrows, :words]
  @stream 256 * 1024 * 1024
  @members 65_536
  @name 4096
  @extended 65_536
  @hex "a Hex package's contents.tar.gz"

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
    counts = Enum.frequencies_by(changes, & &1.class)
    refused = Enum.count(changes, &(&1.class not in @passing))
    accepted? = opts[:accept] == candidate.digest

    verdict =
      cond do
        refused == 0 -> "pass"
        accepted? -> "accepted"
        true -> "refused"
      end

    classes = Enum.uniq(@classes ++ Map.keys(counts))

    if format == "json" do
      Mix.shell().info(receipt(verdict, deployed, candidate, {classes, counts}, changes))
    else
      Mix.shell().info(String.trim_trailing(diff!(deployed, candidate, :markdown, paths)))
      tally = Enum.map_join(classes, ", ", &"#{counts[&1] || 0} #{&1}")
      Mix.shell().info("\ngate: #{verdict} (#{tally}); candidate #{candidate.digest}")
    end

    if opts[:accept] && !accepted?,
      do: Mix.shell().error("--accept #{inspect(opts[:accept])} is not the candidate's digest")

    if verdict == "refused",
      do: fail(1, "#{refused} changes do not narrow; to accept: --accept #{candidate.digest}")

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

  # The document a path holds, and its version; by its type before it is opened.
  defp locate(path) do
    case File.stat(path) do
      {:ok, %{type: :directory}} -> in_dir(path)
      {:ok, %{type: :regular}} -> if tar?(path), do: in_tar(path), else: in_file(path)
      {:ok, %{type: type}} -> {:error, "not a file, a directory or a tarball (#{type})"}
      {:error, reason} -> {:error, "#{:file.format_error(reason)}"}
    end
  end

  defp tar?(path), do: String.ends_with?(path, [".tar", ".tar.gz", ".tgz"])
  defp in_file(path), do: with({:ok, bytes} <- read_file(path), do: {:ok, bytes, nil})

  # Exactly one library: lib/openagents_policy-<vsn>, deps/openagents_policy or priv/.
  defp in_dir(dir) do
    lib = with {:ok, names} <- File.ls(Path.join(dir, "lib")), do: names, else: (_ -> [])
    deps = "deps/#{@app}/#{@doc_path}"

    found =
      for(name <- Enum.sort(lib), String.starts_with?(name, @app <> "-"), do: "lib/" <> name) ++
        Enum.filter([deps, @doc_path], &File.exists?(Path.join(dir, &1)))

    case found do
      [] ->
        {:error, "no lib/#{@app}-<vsn>/, deps/#{@app}/ nor #{@doc_path} in it"}

      ["lib/#{@app}-" <> vsn = lib] ->
        with {:ok, vsn} <- version(vsn),
             {:ok, bytes} <- read_file(Path.join([dir, lib, @doc_path])),
             do: {:ok, bytes, vsn}

      [doc] ->
        root = Path.join(dir, Path.dirname(Path.dirname(doc)))

        with {:ok, bytes} <- read_file(Path.join(dir, doc)),
             {:ok, vsn} <- meta_version(read_file(Path.join(root, "hex_metadata.config"))),
             do: {:ok, bytes, vsn}

      many ->
        {:error, many(many)}
    end
  end

  defp many(found),
    do: "#{length(found)} #{@app} libraries, one allowed: #{Enum.map_join(found, ", ", &short/1)}"

  # At most `limit` bytes of a regular file; a larger one is refused unread.
  defp read_file(path, limit \\ @limit) do
    with {:ok, %{type: :regular, size: size}} when size <= limit <- File.stat(path),
         {:ok, bytes} when is_binary(bytes) and byte_size(bytes) <= limit <-
           File.open(path, [:read, :binary], &IO.binread(&1, limit + 1)) do
      {:ok, bytes}
    else
      {:ok, :eof} -> {:ok, ""}
      {:ok, %File.Stat{type: :regular, size: size}} -> too_large(size, limit)
      {:ok, %File.Stat{type: type}} -> {:error, "not a file, a directory or a tarball (#{type})"}
      {:ok, bytes} -> too_large(byte_size(bytes), limit)
      {:error, reason} -> {:error, "#{path}: #{:file.format_error(reason)}"}
    end
  end

  defp too_large(size, limit), do: {:error, "#{size} bytes, over the limit of #{limit} bytes"}

  # A release's lib/ member, or a Hex package's contents.tar.gz and metadata.config.
  defp in_tar(path) do
    wanted = fn
      "contents.tar.gz" -> 8 * 1024 * 1024
      "metadata.config" -> 65_536
      name -> if name =~ ~r{^lib/#{@app}-[^/]+/priv/decisions\.json$}, do: @limit
    end

    with {:ok, %{libs: libs, kept: kept}} <- walk({:raw, path}, @stream, wanted) do
      case libs do
        [] ->
          {:error, "a tarball holding neither a release's #{@app} nor a Hex package"}

        ["lib/#{@app}-" <> vsn = lib] ->
          doc = kept["#{lib}/#{@doc_path}"]
          if doc, do: {:ok, doc, vsn}, else: {:error, "#{lib} has no #{@doc_path}"}

        [@hex] ->
          inner = &if(&1 == @doc_path, do: @limit)

          with {:ok, %{kept: inside}} <- walk({:ram, kept["contents.tar.gz"]}, 67_108_864, inner),
               doc when is_binary(doc) <- inside[@doc_path] || {:error, "no #{@doc_path}"},
               {:ok, vsn} <- meta_version({:ok, kept["metadata.config"] || ""}),
               do: {:ok, doc, vsn}
      end
    end
  end

  # A tarball read as a stream (gzip inflated as it is read): every header
  # checked before its member; only what `wanted` names a limit for is kept.
  defp walk(source, budget, wanted) do
    z = :zlib.open()

    try do
      {:ok, fd} = :file.open(elem(source, 1), [elem(source, 0), :read, :binary])
      Process.put({__MODULE__, :read}, 0)
      st = %{z: z, gz: nil, read: 0, budget: budget, wanted: wanted, buf: "", mode: :header}
      st = Map.merge(st, %{next: %{}, names: MapSet.new(), members: 0, libs: [], kept: %{}})
      {:ok, pump(fd, st)}
    rescue
      _ in [ErlangError, MatchError] -> {:error, "not a readable tarball: cut or corrupt"}
    catch
      {:refused, why} ->
        read = Process.get({__MODULE__, :read})
        {:error, "#{why} (refused after #{read} bytes of tar stream, of #{budget})"}
    after
      :zlib.close(z)
    end
  end

  @spec refuse(String.t()) :: no_return()
  defp refuse(why), do: throw({:refused, why})

  defp pump(fd, st) do
    # Compressed, 1 KiB at a time: at most about 1 MiB inflated per read.
    case :file.read(fd, if(st.gz == false, do: 65_536, else: 1024)) do
      {:ok, chunk} -> pump(fd, inflate(st, chunk))
      :eof when st.mode == :end -> (st.gz && :zlib.inflateEnd(st.z) && st) || st
      :eof -> refuse("not a readable tarball: it ends before its end-of-archive")
    end
  end

  defp inflate(%{gz: nil} = st, <<0x1F, 0x8B, _::binary>> = chunk) do
    :ok = :zlib.inflateInit(st.z, 31)
    inflate(%{st | gz: true}, chunk)
  end

  defp inflate(%{gz: true} = st, chunk), do: feed(st, :zlib.inflate(st.z, chunk))
  defp inflate(st, chunk), do: feed(%{st | gz: false}, chunk)

  # Counts what is read against the budget, then parses it.
  defp feed(st, out) do
    bytes = IO.iodata_to_binary(out)
    read = st.read + byte_size(bytes)
    Process.put({__MODULE__, :read}, read)
    if read > st.budget, do: refuse("over the budget of #{st.budget} bytes of tar stream")
    parse(%{st | read: read, buf: st.buf <> bytes})
  end

  defp parse(%{mode: {:data, 0, kept, done}} = st),
    do: parse(done.(st, kept && IO.iodata_to_binary(kept)))

  defp parse(%{mode: {:data, n, kept, done}, buf: buf} = st) when buf != "" do
    {data, rest} = :erlang.split_binary(buf, min(n, byte_size(buf)))
    parse(%{st | buf: rest, mode: {:data, n - byte_size(data), kept && [kept, data], done}})
  end

  defp parse(%{mode: :header, buf: <<header::binary-512, rest::binary>>} = st),
    do: parse(header(%{st | buf: rest}, header))

  defp parse(%{mode: :end, buf: buf} = st) do
    unless zeros?(buf), do: refuse("data after its end-of-archive")
    %{st | buf: ""}
  end

  defp parse(st), do: st

  defp zeros?(<<block::binary-4096, rest::binary>>), do: block == <<0::32768>> and zeros?(rest)
  defp zeros?(rest), do: rest == <<0::size(byte_size(rest) * 8)>>

  defp header(st, <<0::4096>>), do: %{st | mode: :end}

  defp header(st, header) do
    <<name::binary-100, _::binary-24, size::binary-12, _::binary-12, sum::binary-8, type,
      _::binary-100, magic::binary-5, _::binary-83, prefix::binary-155, _::binary-12>> = header

    checked = :lists.sum(:binary.bin_to_list(header)) - :lists.sum(:binary.bin_to_list(sum))

    unless magic == "ustar" and octal(sum) == checked + 256,
      do: refuse("not a readable tarball: a header that is not ustar, or fails its checksum")

    path = Enum.join(for(part <- [prefix, name], (p = trim(part)) != "", do: p), "/")
    {path, size, st} = {st.next[:path] || path, st.next[:size] || octal(size), %{st | next: %{}}}

    if type in ~c"xgLK" and size > @extended, do: refuse("an extended header of #{size} bytes")

    case type do
      ?x -> data(st, size, true, &%{&1 | next: pax(&2)})
      ?g -> data(st, size, true, &if(pax(&2) == %{}, do: &1, else: refuse("a global PAX path")))
      ?L -> data(st, size, true, &%{&1 | next: %{path: trim(&2)}})
      ?K -> data(st, size, false, fn st, _ -> st end)
      _ -> member(st, type, path, size)
    end
  end

  defp trim(field), do: field |> :binary.split(<<0>>) |> hd()

  defp octal(field) do
    case Integer.parse(String.trim(trim(field)), 8) do
      {n, ""} -> n
      _ -> refuse("not a readable tarball: a header whose number is not octal")
    end
  end

  # A PAX extended header's path and size; `key=value` records, each led by its length.
  defp pax(data, found \\ %{})
  defp pax("", found), do: found

  defp pax(data, found) do
    with [len, _] <- :binary.split(data, " "),
         {n, ""} when n > 0 and n <= byte_size(data) <- Integer.parse(len),
         {record, rest} <- :erlang.split_binary(data, n),
         [_, key, value] <- Regex.run(~r/^\d+ ([^=]*)=(.*)\n$/s, record) do
      case key do
        "path" -> pax(rest, Map.put(found, :path, value))
        "size" -> pax(rest, Map.put(found, :size, decimal(value)))
        _ -> pax(rest, found)
      end
    else
      _ -> refuse("not a readable tarball: a PAX header that does not parse")
    end
  end

  defp decimal(value) do
    case Integer.parse(value) do
      {n, ""} when n >= 0 -> n
      _ -> refuse("not a readable tarball: a PAX size that is not a number")
    end
  end

  # A member: its name once, its library counted, kept when wanted.
  defp member(st, type, path, size) do
    parts = for part <- String.split(path, "/"), part not in ["", "."], do: part
    name = Enum.join(parts, "/")
    key = :erlang.md5(name)

    if byte_size(path) > @name, do: refuse("a member name of #{byte_size(path)} bytes, over 4096")
    if ".." in parts, do: refuse("a member name with ..: #{short(name)}")
    if st.members >= @members, do: refuse("over #{@members} members")
    if MapSet.member?(st.names, key), do: refuse("#{short(name)} is in it twice")

    # A library's version read as the moduledoc says, or refused.
    _ =
      with ["lib", @app <> "-" <> vsn | _] <- parts,
           {:error, why} <- version(vsn),
           do: refuse("lib/#{@app}-<vsn>: #{why}")

    lib = with ["lib", @app <> "-" <> _ = lib | _] <- parts, do: "lib/" <> lib, else: (_ -> nil)
    lib = if parts == ["contents.tar.gz"], do: @hex, else: lib
    libs = Enum.uniq(st.libs ++ List.wrap(lib))
    if length(libs) > 1, do: refuse(many(libs))
    limit = st.wanted.(name)
    if limit && type not in [?0, 0, ?7], do: refuse("#{name} is not a regular file")
    if limit && size > limit, do: refuse("#{name}: #{size} bytes, over the limit of #{limit}")
    st = %{st | names: MapSet.put(st.names, key), members: st.members + 1, libs: libs}
    data(st, size, limit != nil, fn st, bytes -> put_in(st.kept[name], bytes) end)
  end

  # A member's data, `size` bytes kept or skipped, then its padding.
  defp data(st, size, keep?, done) do
    if size > st.budget - st.read + byte_size(st.buf),
      do: refuse("a member of #{size} bytes, over the budget of #{st.budget}")

    pad = rem(512 - rem(size, 512), 512)
    header = fn st, _ -> %{st | mode: :header} end
    after_data = fn st, bytes -> %{done.(st, bytes) | mode: {:data, pad, nil, header}} end
    %{st | mode: {:data, size, if(keep?, do: []), after_data}}
  end

  defp short(name) when byte_size(name) <= 100, do: inspect(name)
  defp short(name), do: "#{inspect(binary_part(name, 0, 100))}... (#{byte_size(name)} bytes)"

  defp version(vsn) do
    cond do
      byte_size(vsn) > 64 -> {:error, "a version of #{byte_size(vsn)} bytes, over 64"}
      vsn =~ @vsn -> {:ok, vsn}
      true -> {:error, "a version that is not M.m.p[-pre][+build]: #{inspect(vsn)}"}
    end
  end

  defp meta_version({:ok, meta}) do
    case Regex.run(~r/\{<<"version">>,\s*<<"([^"]*)">>\}/, meta) do
      [_, vsn] -> version(vsn)
      nil -> {:ok, nil}
    end
  end

  defp meta_version(_none), do: {:ok, nil}

  # The receipt, written by hand (a host may lack Jason): at most 32 changes
  # of 3 strings of at most 128 bytes, each escaped to at most 6 times that.
  defp receipt(verdict, deployed, candidate, {classes, counts}, changes) do
    ordered = Enum.sort_by(changes, &(&1.class in @passing))

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
        counts: obj(for(class <- classes, do: {class, "#{counts[class] || 0}"})),
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
  defp cut(s), do: for(<<c::utf8 <- binary_part(s, 0, 125)>>, into: "", do: <<c::utf8>>) <> "…"
end
