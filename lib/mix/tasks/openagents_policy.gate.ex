defmodule Mix.Tasks.OpenagentsPolicy.Gate do
  @shortdoc "Refuses a candidate unless every change narrows, or it is accepted by its digest"
  @moduledoc """
  A release builder's gate, run before any node is touched: the deployed release's
  decision document against the candidate's (`OpenAgentsPolicy.Decisions.diff/3`).
  It passes only when every change narrows or is of words alone; anything else is
  refused until accepted by the candidate's decision digest (its document's SHA-256,
  lowercase hex), so whoever accepts it accepts exactly what ships.

      mix openagents_policy.gate DEPLOYED CANDIDATE [--accept DIGEST] [--format markdown|json]

  Each argument is a JSON file, a directory holding one library (a release,
  a host project, a checkout) or a tarball (a release's, a Hex package's),
  read as a stream within a budget and never extracted. Exits 0 on `pass`
  or an accepted digest, 1 when refused (stderr says `--accept <digest>`),
  2 when an argument cannot be found, read or diffed: never "no changes".
  More: [Deploying](deploying.md), "Before any node is touched"; the
  budget: [Reliability](reliability.md).

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
  @read {__MODULE__, :read}

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
      Mix.shell().info(receipt(verdict, [deployed, candidate], {classes, counts}, changes))
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
    cond do
      File.dir?(path) -> in_dir(path)
      File.regular?(path) and String.ends_with?(path, [".tar", ".tar.gz", ".tgz"]) -> in_tar(path)
      true -> with {:ok, bytes} <- read_file(path), do: {:ok, bytes, nil}
    end
  end

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

  defp too_large(size), do: {:error, "#{size} bytes, over the limit of #{@limit} bytes"}

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

  # A tarball read as a stream, gzip inflated as read, within `budget` bytes of tar:
  # each header checked before its member; only what `wanted` gives a limit is kept.
  defp walk({mode, file}, budget, wanted) do
    z = :zlib.open()
    Process.put(@read, 0)

    try do
      {:ok, fd} = :file.open(file, [mode, :read, :binary])
      gz = :file.read(fd, 2) == {:ok, <<0x1F, 0x8B>>}
      {:ok, 0} = :file.position(fd, 0)
      if gz, do: :ok = :zlib.inflateInit(z, 31)
      st = %{fd: fd, z: z, gz: gz, buf: "", read: 0, budget: budget, wanted: wanted}
      {:ok, members(Map.merge(st, %{next: %{}, names: MapSet.new(), libs: [], kept: %{}}))}
    rescue
      _ in [ErlangError, MatchError] -> {:error, "not a readable tarball: cut or corrupt"}
    catch
      {:refused, why} ->
        {:error, "#{why} (refused after #{Process.get(@read)} bytes of tar stream, of #{budget})"}
    after
      :zlib.close(z)
    end
  end

  @spec refuse(String.t()) :: no_return()
  defp refuse(why), do: throw({:refused, why})

  # The next bytes appended to the buffer, counted against the budget, or :eof.
  # Gzip is read 1 KiB at a time: at most about 1 MiB inflated.
  defp more(st) do
    with {:ok, chunk} <- :file.read(st.fd, if(st.gz, do: 1024, else: 65_536)) do
      bytes = if st.gz, do: IO.iodata_to_binary(:zlib.inflate(st.z, chunk)), else: chunk
      read = st.read + byte_size(bytes)
      Process.put(@read, read)
      if read > st.budget, do: refuse("over the budget of #{st.budget} bytes of tar stream")
      %{st | read: read, buf: st.buf <> bytes}
    end
  end

  defp fill(st) do
    with :eof <- more(st), do: refuse("not a readable tarball: it ends before its end-of-archive")
  end

  # The stream's next `n` bytes: kept (buffered until all are in), or skipped as they come.
  defp take(%{buf: buf} = st, n, _keep?) when byte_size(buf) >= n do
    {bytes, rest} = :erlang.split_binary(buf, n)
    {bytes, %{st | buf: rest}}
  end

  defp take(st, n, true), do: take(fill(st), n, true)
  defp take(%{buf: b} = st, n, false), do: take(fill(%{st | buf: ""}), n - byte_size(b), false)

  defp members(st) do
    case take(st, 512, true) do
      {<<0::4096>>, st} -> finish(st)
      {header, st} -> members(header(st, header))
    end
  end

  # After the end-of-archive, zeros to the end of the stream.
  defp finish(st) do
    unless st.buf == <<0::size(bit_size(st.buf))>>, do: refuse("data after its end-of-archive")

    case more(%{st | buf: ""}) do
      :eof when st.gz -> with :ok <- :zlib.inflateEnd(st.z), do: st
      :eof -> st
      st -> finish(st)
    end
  end

  defp header(st, header) do
    <<name::binary-100, _::binary-24, size::binary-12, _::binary-12, sum::binary-8, type,
      _::binary-100, magic::binary-5, _::binary-83, prefix::binary-155, _::binary-12>> = header

    checked = :lists.sum(:binary.bin_to_list(header)) - :lists.sum(:binary.bin_to_list(sum))

    unless magic == "ustar" and octal(sum) == checked + 256,
      do: refuse("not a readable tarball: a header that is not ustar, or fails its checksum")

    path = st.next["path"] || Enum.join(for(p <- [prefix, name], trim(p) != "", do: trim(p)), "/")
    size = if n = st.next["size"], do: number(n, 10), else: octal(size)
    st = %{st | next: %{}}

    if type in ~c"xgLK" do
      if size > @extended, do: refuse("an extended header of #{size} bytes")
      {data, st} = data(st, size, true)

      case type do
        ?x -> %{st | next: pax(data)}
        ?g -> if pax(data) == %{}, do: st, else: refuse("a global PAX path")
        ?L -> %{st | next: %{"path" => trim(data)}}
        ?K -> st
      end
    else
      member(st, type, path, size)
    end
  end

  defp trim(field), do: field |> :binary.split(<<0>>) |> hd()

  defp octal(field), do: number(String.trim(trim(field)), 8)

  defp number(text, base) do
    case Integer.parse(text, base) do
      {n, ""} when n >= 0 -> n
      _ -> refuse("not a readable tarball: a header's number is not one: #{short(text)}")
    end
  end

  # A PAX extended header's path and size (`<length> <key>=<value>\n` records).
  defp pax(""), do: %{}

  defp pax(data) do
    with {n, " " <> _} when n > 0 and n <= byte_size(data) <- Integer.parse(data),
         {record, rest} = :erlang.split_binary(data, n),
         [_, key, value] <- Regex.run(~r/^\d+ ([^=]*)=(.*)\n$/s, record) do
      Map.merge(Map.take(%{key => value}, ["path", "size"]), pax(rest))
    else
      _ -> refuse("not a readable tarball: a PAX header that does not parse")
    end
  end

  # A member: its name once, its library counted, kept when wanted.
  defp member(st, type, path, size) do
    parts = for part <- String.split(path, "/"), part not in ["", "."], do: part
    name = Enum.join(parts, "/")
    key = :erlang.md5(name)

    if byte_size(path) > @name, do: refuse("a member name of #{byte_size(path)} bytes, over 4096")
    if ".." in parts, do: refuse("a member name with ..: #{short(name)}")
    if MapSet.size(st.names) >= @members, do: refuse("over #{@members} members")
    if MapSet.member?(st.names, key), do: refuse("#{short(name)} is in it twice")

    libs = Enum.uniq(st.libs ++ List.wrap(library(parts)))
    if length(libs) > 1, do: refuse(many(libs))
    limit = st.wanted.(name)
    if limit && type not in [?0, 0, ?7], do: refuse("#{name} is not a regular file")
    if limit && size > limit, do: refuse("#{name}: #{size} bytes, over the limit of #{limit}")
    st = %{st | names: MapSet.put(st.names, key), libs: libs}
    {bytes, st} = data(st, size, limit != nil)
    if limit, do: put_in(st.kept[name], bytes), else: st
  end

  # The library a member is of: a Hex package's, or a release's (its version read as
  # the moduledoc says, or refused), or none.
  defp library(["contents.tar.gz"]), do: @hex

  defp library(["lib", @app <> "-" <> vsn | _]) do
    {:ok, vsn} = with({:error, why} <- version(vsn), do: refuse("lib/#{@app}-<vsn>: #{why}"))
    "lib/#{@app}-#{vsn}"
  end

  defp library(_parts), do: nil

  # A member's data, `size` bytes kept or skipped, then its padding skipped.
  defp data(st, size, keep?) do
    if size > st.budget - st.read + byte_size(st.buf),
      do: refuse("a member of #{size} bytes, over the budget of #{st.budget}")

    {bytes, st} = take(st, size, keep?)
    {bytes, elem(take(st, rem(512 - rem(size, 512), 512), false), 1)}
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

  # The version a Hex metadata file names, if it can be read and names one.
  defp meta_version(read) do
    with {:ok, meta} <- read,
         [_, vsn] <- Regex.run(~r/\{<<"version">>,\s*<<"([^"]*)">>\}/, meta),
         do: version(vsn),
         else: (_ -> {:ok, nil})
  end

  # The receipt, by hand (a host may lack Jason): at most 32 changes of 3 strings of
  # at most 128 bytes, each byte escaped to at most 6.
  defp receipt(verdict, sides, {classes, counts}, changes) do
    [deployed, candidate] = for side <- sides, do: Map.take(side, [:digest, :version])

    listed =
      for c <- Enum.take(Enum.sort_by(changes, &(&1.class in @passing)), 32),
          do: %{class: c.class, table: cut(c.table), says: cut(c.says)}

    %{verdict: verdict, deployed: deployed, candidate: candidate, changes: listed}
    |> Map.put(:counts, Map.new(classes, &{&1, counts[&1] || 0}))
    |> Map.put(:left_out, max(length(changes) - 32, 0))
    |> json()
    |> IO.iodata_to_binary()
  end

  defp json(nil), do: "null"
  defp json(n) when is_integer(n), do: Integer.to_string(n)
  defp json(a) when is_atom(a), do: json(Atom.to_string(a))
  defp json(s) when is_binary(s), do: [?", Regex.replace(~r/["\\\x00-\x1f]/, s, &esc/1), ?"]
  defp json(l) when is_list(l), do: [?[, Enum.intersperse(Enum.map(l, &json/1), ?,), ?]]
  defp json(m), do: [?{, Enum.intersperse(for({k, v} <- m, do: [json(k), ?:, json(v)]), ?,), ?}]

  defp esc(<<c>>), do: "\\u00" <> Base.encode16(<<c>>)

  # At most 128 bytes, cut on a UTF-8 boundary and marked with an ellipsis.
  defp cut(s) when byte_size(s) <= 128, do: s
  defp cut(s), do: for(<<c::utf8 <- binary_part(s, 0, 125)>>, into: "", do: <<c::utf8>>) <> "…"
end
