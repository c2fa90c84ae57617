# The structure of a macOS NIF library, which no machine here can load: run
# by scripts/precompiled_build.sh on each library it builds and by
# scripts/precompiled_check.sh on each macOS artifact of dist/. Reads the
# Mach-O file itself (no otool, llvm-objdump or Python: Elixir is on every
# machine that builds or checks the artifacts).
#
#   elixir scripts/macho_check.exs FILE ARCH MACOS
#   e.g. elixir scripts/macho_check.exs libopenagents_policy_nif.dylib arm64 11.0
#
# FILE must be a thin 64-bit Mach-O dylib (no universal file) for ARCH
# (arm64 or x86_64) in the two-level namespace, whose
#   * minimum macOS (LC_BUILD_VERSION, or LC_VERSION_MIN_MACOSX) is exactly MACOS;
#   * only linked dylib is /usr/lib/libSystem.B.dylib;
#   * undefined symbols each bind to libSystem, or are the VM's `_enif_*`
#     (looked up in the process that loads it);
#   * export trie holds `_nif_init`;
#   * code signature, when it has one (arm64 must: Apple silicon kills a
#     process that runs unsigned code), has a SHA-256 for every page of the
#     file before it, and each matches.
# Prints one line saying so and exits 0; else prints why not on stderr and
# exits 1. Absent: any check of the code itself, and of the signature beyond
# its page hashes (zig's linker signs ad hoc, as Apple's does: there is no
# certificate to check).
defmodule MachOCheck do
  import Bitwise

  @cpu_types %{"arm64" => 0x0100000C, "x86_64" => 0x01000007}
  @libsystem "/usr/lib/libSystem.B.dylib"
  # LC_LOAD_DYLIB, LC_LOAD_WEAK_DYLIB, LC_REEXPORT_DYLIB, LC_LAZY_LOAD_DYLIB, LC_LOAD_UPWARD_DYLIB
  @dylib_commands [0xC, 0x80000018, 0x8000001F, 0x20, 0x80000023]
  @lc_symtab 0x2
  @lc_code_signature 0x1D
  @lc_dyld_info [0x22, 0x80000022]
  @lc_dyld_exports_trie 0x80000033
  @lc_build_version 0x32
  @lc_version_min_macosx 0x24
  @platform_macos 1
  @mh_dylib 6
  @mh_twolevel 0x80

  def main([file, arch, macos]) do
    case check(File.read!(file), arch, macos) do
      {:ok, summary} ->
        IO.puts(summary)

      {:error, why} ->
        IO.puts(:stderr, "#{file}: #{why}")
        System.halt(1)
    end
  end

  def main(_) do
    IO.puts(:stderr, "usage: elixir scripts/macho_check.exs FILE arm64|x86_64 MACOS_VERSION")
    System.halt(2)
  end

  @doc "The summary line of a library that passes every check, or why it does not."
  def check(data, arch, macos) do
    with {:ok, header, commands} <- header(data),
         :ok <-
           expect(
             header.cputype == Map.fetch!(@cpu_types, arch),
             "not an #{arch} library (CPU type #{hex(header.cputype)})"
           ),
         :ok <-
           expect(header.filetype == @mh_dylib, "not a dylib (file type #{header.filetype})"),
         :ok <-
           expect(
             (header.flags &&& @mh_twolevel) != 0,
             "not in the two-level namespace: its undefined symbols name no library"
           ),
         {:ok, found, source} <- min_macos(commands),
         :ok <-
           expect(
             found == encode(macos),
             "its minimum macOS is #{decode(found)} (#{source}), not #{macos}"
           ),
         dylibs = for({cmd, body} <- commands, cmd in @dylib_commands, do: dylib_name(body)),
         :ok <-
           expect(dylibs == [@libsystem], "it links #{inspect(dylibs)}, not #{@libsystem} alone"),
         {:ok, undefined} <- undefined(data, commands),
         foreign = for({name, ordinal} <- undefined, not allowed?(name, ordinal), do: name),
         :ok <-
           expect(
             foreign == [],
             "undefined symbols outside libSystem and the VM's enif_*: #{Enum.join(Enum.take(foreign, 10), ", ")}"
           ),
         {:ok, exports} <- exports(data, commands),
         :ok <- expect("_nif_init" in exports, "_nif_init is not exported"),
         {:ok, signed} <- signature(data, commands, arch) do
      enif = Enum.count(undefined, fn {name, _} -> String.starts_with?(name, "_enif_") end)

      {:ok,
       "#{arch} dylib, minimum macOS #{decode(found)} (#{source}), links only #{@libsystem}, " <>
         "#{length(undefined)} undefined symbols (#{length(undefined) - enif} from libSystem, #{enif} enif_*), " <>
         "exports _nif_init, #{length(exports)} exports, #{signed}"}
    end
  end

  # The code signature: a SuperBlob whose CodeDirectory holds a SHA-256 of
  # every page of the file before the signature, each checked here (a
  # signature that does not match the file is as fatal as none on arm64).
  defp signature(data, commands, arch) do
    case List.keyfind(commands, @lc_code_signature, 0) do
      nil when arch == "arm64" ->
        {:error, "it is not signed (no LC_CODE_SIGNATURE): arm64 macOS runs no unsigned code"}

      nil ->
        {:ok, "unsigned"}

      {_, <<_::64, off::little-32, size::little-32>>} when off + size <= byte_size(data) ->
        with {:ok, cd} <- code_directory(binary_part(data, off, size)) do
          pages(data, cd, off)
        end

      _ ->
        {:error, "its LC_CODE_SIGNATURE points outside the file"}
    end
  end

  defp code_directory(<<0xFADE0CC0::32, _length::32, count::32, rest::binary>> = blob)
       when byte_size(rest) >= count * 8 do
    offsets =
      for <<type::32, offset::32 <- binary_part(rest, 0, count * 8)>>, type == 0, do: offset

    case offsets do
      [offset] when offset < byte_size(blob) ->
        {:ok, binary_part(blob, offset, byte_size(blob) - offset)}

      _ ->
        {:error, "its code signature holds no single CodeDirectory"}
    end
  end

  defp code_directory(_blob), do: {:error, "its code signature is not a SuperBlob"}

  defp pages(
         data,
         <<0xFADE0C02::32, _length::32, _version::32, flags::32, hash_offset::32, _ident::32,
           _special::32, slots::32, limit::32, hash_size, hash_type, _platform, page_shift,
           _::binary>> = cd,
         signature_offset
       ) do
    page = 1 <<< page_shift

    cond do
      hash_type != 2 or hash_size != 32 ->
        {:error, "its CodeDirectory's hashes are not SHA-256 (type #{hash_type})"}

      limit != signature_offset or slots != div(limit + page - 1, page) or
          hash_offset + slots * 32 > byte_size(cd) ->
        {:error, "its CodeDirectory does not cover the file up to the signature"}

      true ->
        bad =
          for i <- 0..(slots - 1),
              :crypto.hash(:sha256, binary_part(data, i * page, min(page, limit - i * page))) !=
                binary_part(cd, hash_offset + i * 32, 32),
              do: i

        if bad == [],
          do:
            {:ok, "signed#{if (flags &&& 0x2) != 0, do: " ad hoc"}, #{slots} page hashes match"},
          else:
            {:error,
             "its code signature does not match pages #{Enum.join(Enum.take(bad, 5), ", ")}"}
    end
  end

  defp pages(_data, _cd, _offset), do: {:error, "its CodeDirectory is unreadable"}

  defp expect(true, _why), do: :ok
  defp expect(false, why), do: {:error, why}

  defp header(
         <<0xFEEDFACF::little-32, cputype::little-32, _subtype::little-32, filetype::little-32,
           ncmds::little-32, sizeofcmds::little-32, flags::little-32, _reserved::little-32,
           rest::binary>>
       ) do
    with {:ok, commands} <-
           commands(binary_part(rest, 0, min(sizeofcmds, byte_size(rest))), ncmds, []) do
      {:ok, %{cputype: cputype, filetype: filetype, flags: flags}, commands}
    end
  end

  defp header(<<magic::big-32, _::binary>>) when magic in [0xCAFEBABE, 0xCAFEBABF],
    do: {:error, "a universal (fat) file, not a library of one architecture"}

  defp header(_), do: {:error, "not a 64-bit little-endian Mach-O file"}

  defp commands(_rest, 0, acc), do: {:ok, Enum.reverse(acc)}

  defp commands(<<cmd::little-32, size::little-32, _::binary>> = rest, n, acc)
       when size >= 8 and size <= byte_size(rest) do
    body = binary_part(rest, 0, size)
    commands(binary_part(rest, size, byte_size(rest) - size), n - 1, [{cmd, body} | acc])
  end

  defp commands(_rest, _n, _acc), do: {:error, "its load commands are truncated"}

  defp min_macos(commands) do
    case {List.keyfind(commands, @lc_build_version, 0),
          List.keyfind(commands, @lc_version_min_macosx, 0)} do
      {{_, <<_::64, @platform_macos::little-32, minos::little-32, _::binary>>}, _} ->
        {:ok, minos, "LC_BUILD_VERSION"}

      {{_, <<_::64, platform::little-32, _::binary>>}, _} ->
        {:error, "it is built for platform #{platform}, not macOS (#{@platform_macos})"}

      {nil, {_, <<_::64, version::little-32, _::binary>>}} ->
        {:ok, version, "LC_VERSION_MIN_MACOSX"}

      _ ->
        {:error, "it names no minimum macOS (no LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX)"}
    end
  end

  # Versions are xxxx.yy.zz in nibbles: 11.0 is 0x000B0000.
  defp encode(version) do
    [major, minor, patch] =
      Enum.take(Enum.map(String.split(version, "."), &String.to_integer/1) ++ [0, 0], 3)

    major <<< 16 ||| minor <<< 8 ||| patch
  end

  defp decode(v) do
    case {v >>> 16, v >>> 8 &&& 0xFF, v &&& 0xFF} do
      {major, minor, 0} -> "#{major}.#{minor}"
      {major, minor, patch} -> "#{major}.#{minor}.#{patch}"
    end
  end

  defp dylib_name(<<_::64, offset::little-32, _::binary>> = body) when offset < byte_size(body),
    do: body |> binary_part(offset, byte_size(body) - offset) |> cstring()

  defp dylib_name(_body), do: "(unreadable dylib command)"

  defp cstring(data), do: data |> :binary.split(<<0>>) |> hd()

  # The undefined external symbols of the symbol table, with the library
  # ordinal of each (the high byte of n_desc): 1 is the first linked dylib,
  # 0xFE a dynamic lookup, 0xFF the executable that loads the library.
  defp undefined(data, commands) do
    case List.keyfind(commands, @lc_symtab, 0) do
      {_, <<_::64, symoff::little-32, nsyms::little-32, stroff::little-32, strsize::little-32>>}
      when symoff + nsyms * 16 <= byte_size(data) and stroff + strsize <= byte_size(data) ->
        strings = binary_part(data, stroff, strsize)
        table = binary_part(data, symoff, nsyms * 16)

        # Not a debugging entry (N_STAB), undefined (N_UNDF), external
        # (N_EXT), and not a common symbol (a value).
        undefined =
          for <<strx::little-32, type, _sect, desc::little-16, value::little-64 <- table>>,
              (type &&& 0xE0) == 0 and (type &&& 0x0E) == 0 and (type &&& 0x01) == 1 and
                value == 0,
              do: {cstring(binary_part(strings, strx, strsize - strx)), desc >>> 8}

        {:ok, undefined}

      _ ->
        {:error, "it has no readable symbol table (LC_SYMTAB)"}
    end
  end

  # Ordinal 1 is libSystem: check/3 refused any other linked dylib before.
  defp allowed?(_name, 1), do: true
  defp allowed?("_enif_" <> _, ordinal), do: ordinal in [0xFE, 0xFF]
  defp allowed?(_name, _ordinal), do: false

  # The names in the export trie, the table dyld's dlsym (and so the VM's
  # load_nif) looks names up in.
  defp exports(data, commands) do
    trie =
      Enum.find_value(commands, fn
        {cmd, <<_::64, _::binary-32, off::little-32, size::little-32>>}
        when cmd in @lc_dyld_info ->
          {off, size}

        {@lc_dyld_exports_trie, <<_::64, off::little-32, size::little-32>>} ->
          {off, size}

        _ ->
          nil
      end)

    case trie do
      {off, size} when size > 0 and off + size <= byte_size(data) ->
        walk(binary_part(data, off, size), [{0, ""}], MapSet.new(), [])

      _ ->
        {:error, "it has no export trie"}
    end
  end

  defp walk(_trie, [], _seen, names), do: {:ok, names}

  defp walk(trie, [{offset, prefix} | rest], seen, names) do
    with false <- offset >= byte_size(trie) or MapSet.member?(seen, offset),
         node = binary_part(trie, offset, byte_size(trie) - offset),
         {terminal, node} <- uleb(node),
         true <- terminal < byte_size(node),
         <<count, node::binary>> <- binary_part(node, terminal, byte_size(node) - terminal),
         {:ok, children} <- children(node, count, prefix, []) do
      names = if terminal > 0, do: [prefix | names], else: names
      walk(trie, children ++ rest, MapSet.put(seen, offset), names)
    else
      _ -> {:error, "its export trie is malformed at offset #{offset}"}
    end
  end

  defp children(_node, 0, _prefix, acc), do: {:ok, acc}

  defp children(node, n, prefix, acc) do
    with [edge, node] <- :binary.split(node, <<0>>),
         {child, node} <- uleb(node) do
      children(node, n - 1, prefix, [{child, prefix <> edge} | acc])
    end
  end

  defp uleb(data, shift \\ 0, value \\ 0)

  defp uleb(<<1::1, bits::7, rest::binary>>, shift, value) when shift < 64,
    do: uleb(rest, shift + 7, value ||| bits <<< shift)

  defp uleb(<<0::1, bits::7, rest::binary>>, shift, value), do: {value ||| bits <<< shift, rest}
  defp uleb(_data, _shift, _value), do: :error

  defp hex(n), do: "0x" <> Integer.to_string(n, 16)
end

MachOCheck.main(System.argv())
