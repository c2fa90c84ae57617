defmodule OpenAgentsPolicy.BuildTargetTest do
  # The precompiled targets: what OpenAgentsPolicy.Native declares to
  # rustler_precompiled (which downloads, or with force_build builds, the
  # library for the machine it compiles on) is exactly what `make
  # precompiled` (scripts/precompiled_build.sh) builds and publishes, and
  # rustler_precompiled resolves this machine, and each kind of machine the
  # artifacts are built for, to one of them.
  use ExUnit.Case, async: true
  @moduletag :repo

  @native Path.expand("../../lib/openagents_policy/native.ex", __DIR__)
  @build Path.expand("../../scripts/precompiled_build.sh", __DIR__)

  # native.ex's `targets: ~w(...)` and `nif_versions: [...]`, read from its text.
  defp declared do
    source = File.read!(@native)
    [_, targets] = Regex.run(~r/\btargets:\s*~w\(([^)]*)\)/, source)
    [_, versions] = Regex.run(~r/\bnif_versions:\s*\[([^\]]*)\]/, source)
    versions = Regex.scan(~r/"([^"]+)"/, versions, capture: :all_but_first)
    {targets |> String.split() |> Enum.sort(), List.flatten(versions)}
  end

  # The build's default target list (the published triples) and its NIF version.
  defp published do
    script = File.read!(@build)
    [_, targets] = Regex.run(~r/PRECOMPILED_TARGETS:-([^}]+)\}/, script)
    [_, version] = Regex.run(~r/^NIF_VERSION=(\S+)$/m, script)
    {targets |> String.split() |> Enum.sort(), [version]}
  end

  # rustler_precompiled's view of a machine (RustlerPrecompiled.target/3's
  # first argument): the system architecture OTP reports there, split as
  # rustler_precompiled splits it, and the newest NIF version declared that
  # a VM of `nif_version` loads.
  defp machine(architecture, os_type, nif_version, declared_versions) do
    parts = String.split(architecture, "-")
    keys = if length(parts) == 4, do: [:arch, :vendor, :os, :abi], else: [:arch, :vendor, :os]

    {:ok, version} =
      RustlerPrecompiled.find_compatible_nif_version(nif_version, declared_versions)

    %{
      os_type: os_type,
      target_system: keys |> Enum.zip(parts) |> Map.new(),
      word_size: 8,
      nif_version: version
    }
  end

  test "native.ex declares exactly the targets and the NIF version make precompiled publishes" do
    {targets, versions} = declared()
    assert length(targets) == 6
    assert {targets, versions} == published()
    assert versions == ["2.15"]
  end

  test "this machine resolves to a declared target, with NIF version 2.15" do
    {targets, versions} = declared()
    architecture = to_string(:erlang.system_info(:system_architecture))
    nif_version = to_string(:erlang.system_info(:nif_version))
    config = machine(architecture, :os.type(), nif_version, versions)

    assert {:ok, "nif-2.15-" <> triple} = RustlerPrecompiled.target(config, targets, versions)
    assert triple in targets
  end

  test "the machines the artifacts are built for each resolve to their own target" do
    {targets, versions} = declared()

    # As erlang:system_info(system_architecture) reads there: Debian,
    # Alpine, macOS on Apple silicon and on Intel; and an Apple silicon VM
    # that calls its CPU arm.
    served = [
      {"x86_64-pc-linux-gnu", {:unix, :linux}, "x86_64-unknown-linux-gnu"},
      {"aarch64-unknown-linux-gnu", {:unix, :linux}, "aarch64-unknown-linux-gnu"},
      {"x86_64-alpine-linux-musl", {:unix, :linux}, "x86_64-unknown-linux-musl"},
      {"aarch64-alpine-linux-musl", {:unix, :linux}, "aarch64-unknown-linux-musl"},
      {"aarch64-apple-darwin23.4.0", {:unix, :darwin}, "aarch64-apple-darwin"},
      {"x86_64-apple-darwin21.6.0", {:unix, :darwin}, "x86_64-apple-darwin"},
      {"arm-apple-darwin20.1.0", {:unix, :darwin}, "aarch64-apple-darwin"}
    ]

    # OTP 25 (NIF 2.16) and OTP 26 and later (2.17) load the 2.15 library.
    for {architecture, os_type, triple} <- served, nif_version <- ["2.15", "2.16", "2.17"] do
      config = machine(architecture, os_type, nif_version, versions)

      assert RustlerPrecompiled.target(config, targets, versions) == {:ok, "nif-2.15-#{triple}"},
             "#{architecture} (NIF #{nif_version})"
    end

    assert served |> Enum.map(&elem(&1, 2)) |> Enum.uniq() |> Enum.sort() == targets
  end
end
