defmodule OpenAgentsPolicy.MachOCheckTest do
  # scripts/macho_check.exs, the only check a macOS artifact gets (no macOS
  # machine runs here), run as the build and the precompiled check run it,
  # on Mach-O dylibs written here: one as zig's linker lays out the real
  # ones (scripts/precompiled_check.sh runs it on those), and one for each
  # way a library can be wrong, each seen refused.
  use ExUnit.Case, async: true
  @moduletag :repo
  import Bitwise

  @script Path.expand("../../scripts/macho_check.exs", __DIR__)
  @libsystem "/usr/lib/libSystem.B.dylib"
  @cpu %{arm64: 0x0100000C, x86_64: 0x01000007}

  @good [
    cpu: :arm64,
    dylibs: [@libsystem],
    version: {:build_version, 1, {11, 0}},
    undefined: [{"_malloc", 1}, {"_pthread_key_create", 1}],
    exports: ["_nif_init", "_openagents_policy_nif_nif_init"],
    signed: true,
    flags: 0x80 ||| 0x100_000
  ]

  # Runs the script on a file holding `data`, as `arch` for macOS 11.0.
  defp check(data, arch \\ "arm64") do
    file = Path.join(System.tmp_dir!(), "macho_check-#{System.unique_integer([:positive])}.so")
    File.write!(file, data)

    try do
      System.cmd(System.find_executable("elixir"), [@script, file, arch, "11.0"],
        stderr_to_stdout: true
      )
    after
      File.rm(file)
    end
  end

  defp refused(data, arch \\ "arm64") do
    {output, status} = check(data, arch)
    assert status == 1, output
    output
  end

  test "a library laid out as zig links the artifacts passes, and says what it is" do
    {output, 0} = check(dylib(@good))

    assert output =~
             "arm64 dylib, minimum macOS 11.0 (LC_BUILD_VERSION), links only #{@libsystem}"

    assert output =~ "2 undefined symbols (2 from libSystem, 0 enif_*)"
    assert output =~ "exports _nif_init, 2 exports, signed ad hoc, 1 page hashes match"

    x86 = Keyword.merge(@good, cpu: :x86_64, signed: false)
    {output, 0} = check(dylib(x86), "x86_64")
    assert output =~ "x86_64 dylib, minimum macOS 11.0"
    assert output =~ ", unsigned"
  end

  test "the VM's enif_* may be left to the loader, and the older version command counts" do
    lookup = Keyword.merge(@good, undefined: [{"_malloc", 1}, {"_enif_make_atom", 0xFE}])
    {output, 0} = check(dylib(lookup))
    assert output =~ "2 undefined symbols (1 from libSystem, 1 enif_*)"

    old = Keyword.put(@good, :version, {:version_min_macosx, {11, 0}})
    {output, 0} = check(dylib(old))
    assert output =~ "minimum macOS 11.0 (LC_VERSION_MIN_MACOSX)"
  end

  describe "refused" do
    test "a library of the other CPU" do
      assert refused(dylib(@good), "x86_64") =~ "not an x86_64 library (CPU type 0x100000C)"
    end

    test "a minimum macOS other than the chosen one" do
      newer = Keyword.put(@good, :version, {:build_version, 1, {15, 0}})

      assert refused(dylib(newer)) =~
               "its minimum macOS is 15.0 (LC_BUILD_VERSION), not 11.0"

      ios = Keyword.put(@good, :version, {:build_version, 2, {11, 0}})
      assert refused(dylib(ios)) =~ "built for platform 2, not macOS"

      assert refused(dylib(Keyword.put(@good, :version, nil))) =~ "names no minimum macOS"
    end

    test "a dylib linked beside libSystem" do
      linked = Keyword.put(@good, :dylibs, [@libsystem, "/opt/homebrew/lib/libssl.3.dylib"])

      assert refused(dylib(linked)) =~
               ~s(it links ["#{@libsystem}", "/opt/homebrew/lib/libssl.3.dylib"])
    end

    test "an undefined symbol outside libSystem and enif_*" do
      flat = Keyword.put(@good, :undefined, [{"_malloc", 1}, {"_SSL_new", 0xFE}])

      assert refused(dylib(flat)) =~
               "undefined symbols outside libSystem and the VM's enif_*: _SSL_new"

      self = Keyword.put(@good, :undefined, [{"_enif_alloc", 0}])
      assert refused(dylib(self)) =~ "outside libSystem and the VM's enif_*: _enif_alloc"

      flat_namespace = Keyword.put(@good, :flags, 0x100_000)
      assert refused(dylib(flat_namespace)) =~ "not in the two-level namespace"
    end

    test "no _nif_init export" do
      bare = Keyword.put(@good, :exports, ["_openagents_policy_nif_nif_init"])
      assert refused(dylib(bare)) =~ "_nif_init is not exported"
    end

    test "an unsigned arm64 library, or one whose signature does not match it" do
      assert refused(dylib(Keyword.put(@good, :signed, false))) =~ "it is not signed"

      # One byte of its own install name changed after signing.
      signed = dylib(@good)
      {at, _} = :binary.match(signed, "@rpath/")

      tampered =
        binary_part(signed, 0, at) <>
          "X" <> binary_part(signed, at + 1, byte_size(signed) - at - 1)

      assert refused(tampered) =~ "its code signature does not match pages 0"
    end

    test "what is not one thin 64-bit Mach-O dylib" do
      assert refused(<<0xCAFEBABE::32, 2::32, 0::256>>) =~ "a universal (fat) file"

      assert refused(<<0x7F, "ELF", 2, 1, 1, 0::size(8 * 57)>>) =~
               "not a 64-bit little-endian Mach-O"

      <<header::binary-32, _::binary>> = dylib(@good)
      assert refused(header) =~ "its load commands are truncated"
    end
  end

  # A Mach-O dylib: the header, the load commands `opts` ask for, then the
  # symbol table (its undefined symbols, each with a library ordinal), the
  # string table and the export trie, as llvm-objdump --macho reads them. No
  # code: the script reads none.
  defp dylib(opts) do
    names = Enum.map(opts[:undefined], &elem(&1, 0))
    strings = IO.iodata_to_binary([" ", 0 | Enum.map(names, &[&1, 0])])
    trie = trie(opts[:exports])

    commands = fn symoff, stroff, trieoff, {sigoff, sigsize} ->
      symbols =
        names
        |> Enum.zip(opts[:undefined])
        |> Enum.map_reduce(2, fn {name, {_, ordinal}}, strx ->
          {<<strx::little-32, 0x01, 0, ordinal <<< 8::little-16, 0::little-64>>,
           strx + byte_size(name) + 1}
        end)
        |> elem(0)

      nsyms = length(symbols)

      cmds =
        [dylib_command(0xD, "@rpath/libopenagents_policy_nif.so")] ++
          Enum.map(opts[:dylibs], &dylib_command(0xC, &1)) ++
          [
            version_command(opts[:version]),
            <<0x2::little-32, 24::little-32, symoff::little-32, nsyms::little-32,
              stroff::little-32, byte_size(strings)::little-32>>,
            [
              <<0x80000022::little-32, 48::little-32>>,
              <<0::size(8 * 32)>>,
              <<trieoff::little-32, byte_size(trie)::little-32>>
            ],
            if(opts[:signed],
              do: <<0x1D::little-32, 16::little-32, sigoff::little-32, sigsize::little-32>>,
              else: []
            )
          ]

      {Enum.reject(cmds, &(&1 in [[], nil])), IO.iodata_to_binary(symbols)}
    end

    {cmds, symbols} = commands.(0, 0, 0, {0, 0})
    sizeofcmds = IO.iodata_length(cmds)
    symoff = 32 + sizeofcmds
    stroff = symoff + byte_size(symbols)
    trieoff = stroff + byte_size(strings)
    sigoff = trieoff + byte_size(trie)
    sigsize = byte_size(signature(:binary.copy(<<0>>, sigoff)))
    {cmds, symbols} = commands.(symoff, stroff, trieoff, {sigoff, sigsize})

    code =
      IO.iodata_to_binary([
        <<0xFEEDFACF::little-32, Map.fetch!(@cpu, opts[:cpu])::little-32, 0::little-32,
          6::little-32, length(cmds)::little-32, sizeofcmds::little-32, opts[:flags]::little-32,
          0::little-32>>,
        cmds,
        symbols,
        strings,
        trie
      ])

    if opts[:signed], do: code <> signature(code), else: code
  end

  # An ad hoc signature as zig's linker writes one (big-endian): a SuperBlob
  # holding one CodeDirectory, whose slots are the SHA-256 of each 4 KiB page
  # of `code` (the last one as far as `code` goes).
  defp signature(code) do
    ident = "synthetic\0"
    slots = div(byte_size(code) + 4095, 4096)
    hash_offset = 44 + byte_size(ident)

    hashes =
      for i <- 0..(slots - 1), into: "" do
        :crypto.hash(:sha256, binary_part(code, i * 4096, min(4096, byte_size(code) - i * 4096)))
      end

    directory =
      <<0xFADE0C02::32, hash_offset + slots * 32::32, 0x20400::32, 0x20002::32, hash_offset::32,
        44::32, 0::32, slots::32, byte_size(code)::32, 32, 2, 0, 12, 0::32>> <> ident <> hashes

    <<0xFADE0CC0::32, 20 + byte_size(directory)::32, 1::32, 0::32, 20::32>> <> directory
  end

  # LC_ID_DYLIB (0xD, its own name) or LC_LOAD_DYLIB (0xC).
  defp dylib_command(cmd, name) do
    size = 24 + byte_size(name) + 1
    padded = size + rem(8 - rem(size, 8), 8)

    <<cmd::little-32, padded::little-32, 24::little-32, 2::little-32, 0x10000::little-32,
      0x10000::little-32, name::binary, 0::size(8 * (padded - 24 - byte_size(name)))>>
  end

  defp version_command(nil), do: nil

  defp version_command({:build_version, platform, {major, minor}}),
    do:
      <<0x32::little-32, 24::little-32, platform::little-32,
        major <<< 16 ||| minor <<< 8::little-32, 0x000E0000::little-32, 0::little-32>>

  defp version_command({:version_min_macosx, {major, minor}}),
    do: <<0x24::little-32, 16::little-32, major <<< 16 ||| minor <<< 8::little-32, 0::little-32>>

  # A root with one edge per name (the whole name), each to a terminal node
  # (flags 0, address 0, no children): small enough for one-byte offsets.
  defp trie(names) do
    root_size = 2 + Enum.sum(Enum.map(names, &(byte_size(&1) + 2)))
    true = root_size + 4 * length(names) < 128

    edges =
      names |> Enum.with_index() |> Enum.map(fn {name, i} -> [name, 0, root_size + 4 * i] end)

    IO.iodata_to_binary([0, length(names), edges, List.duplicate(<<2, 0, 0, 0>>, length(names))])
  end
end
