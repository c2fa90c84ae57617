defmodule Mix.OpenAgentsPolicy.Cargo do
  @moduledoc """
  The source build: runs cargo and reads its JSON messages.

  `cargo rustc --locked -p openagents_policy_nif --lib [--release]`: cargo
  decides what is stale, and its own settings apply (`CARGO_TARGET_DIR`,
  `.cargo/config.toml`, ...), so the NIF library's path is taken from
  cargo's report of the cdylib (its `compiler-artifact` message), never
  guessed. What cargo says for people is streamed (less its "Finished"
  line, so a no-op compile stays silent).

  Two checkouts sharing a target directory share cargo's units, and cargo
  names a cdylib without a hash: so on Linux each build carries a mark of
  its checkout (an ELF build-id that is a digest of the checkout's real
  path, passed to the linker, and a unit metadata of its own), and a NIF
  library without this checkout's mark is rebuilt (its `lib.rs` touched)
  rather than returned.

  Owns running cargo, the checkout mark and reading cargo's messages
  (through `Mix.OpenAgentsPolicy.CargoJSON`). Absent: whether to build at
  all, and what to do when cargo is missing (`Mix.OpenAgentsPolicy.Source`),
  and installing what it built.
  """

  alias Mix.OpenAgentsPolicy.CargoJSON
  alias Mix.Tasks.Compile.OpenagentsPolicyNif, as: Nif

  @doc """
  Builds the NIF crate of the checkout at `root` with the `cargo`
  executable, in `profile` ("release" or "debug"), and returns the NIF
  library cargo reports, checked to be this checkout's build.
  """
  @spec build!(Path.t(), Path.t(), String.t()) :: Path.t()
  def build!(cargo, root, profile) do
    mark = checkout_mark(root)
    library = run!(cargo, root, profile, mark)

    if mark == nil or marked?(library, mark) do
      library
    else
      # Cargo called this checkout's build fresh, but the file is another
      # checkout's (they share the target directory): build this one again.
      Mix.shell().info("#{library} was built from another checkout: rebuilding it from #{root}")

      File.touch!(Path.join(root, "native/#{Nif.crate()}/src/lib.rs"))
      library = run!(cargo, root, profile, mark)

      marked?(library, mark) ||
        Mix.raise("#{library} is still not built from #{root} after a rebuild")

      library
    end
  end

  # The build-id this checkout's builds carry (16 bytes of the SHA-256 of
  # its real path); nil where the linker is not an ELF linker.
  defp checkout_mark(root) do
    if match?({:unix, :linux}, :os.type()) do
      real = root |> Path.expand() |> real_path()
      Nif.ensure_otp_apps([:crypto])
      :crypto.hash(:sha256, real) |> binary_part(0, 16)
    end
  end

  defp real_path(path) do
    case :file.read_link_all(String.to_charlist(path)) do
      {:ok, target} ->
        real_path(Path.expand(List.to_string(target), Path.dirname(path)))

      {:error, _} ->
        case Path.dirname(path) do
          ^path -> path
          parent -> Path.join(real_path(parent), Path.basename(path))
        end
    end
  end

  # Cargo names the units of a workspace by paths relative to its root, so
  # two checkouts sharing a target directory share every unit, fingerprints
  # included: a checkout's build can link the other's core crate. Cargo names
  # each unit's files by a hash that includes its rustflags, so rustc's
  # `-C metadata` with the checkout's digest, added to `build.rustflags` on
  # the command line (`--config`, which cargo merges with the configured
  # rustflags), gives each checkout units of its own. (A `RUSTFLAGS`
  # environment variable replaces `build.rustflags`, ours included; the
  # build-id check then still refuses another checkout's library.)
  defp checkout_args(nil), do: []

  defp checkout_args(mark),
    do: [
      "--config",
      ~s(build.rustflags=["-C", "metadata=openagents-#{Base.encode16(mark, case: :lower)}"])
    ]

  # The GNU build-id note: namesz 4, descsz 16, type 3, "GNU\0", the mark.
  defp marked?(library, mark) do
    note = <<4::native-32, 16::native-32, 3::native-32, "GNU", 0, mark::binary>>
    :binary.match(File.read!(library), note) != :nomatch
  end

  defp run!(cargo, root, profile, mark) do
    crate = Nif.crate()

    args =
      ["rustc", "--locked", "-p", crate, "--lib", "--message-format=json-render-diagnostics"] ++
        checkout_args(mark) ++
        if(profile == "release", do: ["--release"], else: []) ++
        if(mark,
          do: ["--", "-C", "link-arg=-Wl,--build-id=0x" <> Base.encode16(mark, case: :lower)],
          else: []
        )

    port =
      Port.open({:spawn_executable, cargo}, [
        :binary,
        :exit_status,
        :stderr_to_stdout,
        {:line, 65_536},
        args: args,
        cd: root
      ])

    {status, libraries} = collect(port, "", [])

    if status != 0 do
      Mix.raise("""
      `cargo #{Enum.join(args, " ")}` failed with exit status #{status} (output above).
      If it says Cargo.lock needs to be updated, run `cargo update --workspace` in #{root}.
      To use a prebuilt library instead, set OPENAGENTS_POLICY_NIF_PATH.
      """)
    end

    case Enum.uniq(libraries) do
      [library] ->
        library

      [] ->
        Mix.raise("cargo built #{crate} but reported no cdylib for it")

      several ->
        Mix.raise(
          "cargo reported #{length(several)} cdylibs for #{crate} (several build " <>
            "targets?), so which one to install is ambiguous: #{Enum.join(several, ", ")}"
        )
    end
  end

  defp collect(port, partial, libraries) do
    receive do
      {^port, {:data, {:noeol, chunk}}} ->
        collect(port, partial <> chunk, libraries)

      {^port, {:data, {:eol, chunk}}} ->
        collect(port, "", line(partial <> chunk, libraries))

      {^port, {:exit_status, status}} ->
        {status, libraries}
    end
  end

  # Cargo's JSON messages start with `{"reason":`; everything else is for
  # Cargo's JSON messages start with `{"reason":`; everything else is for
  # people.
  defp line("{\"reason\":" <> _ = json, libraries) do
    crate = Nif.crate()

    case String.contains?(json, crate) and CargoJSON.decode(json) do
      %{"reason" => "compiler-artifact", "target" => %{"name" => ^crate} = target} = message ->
        if "cdylib" in Map.get(target, "crate_types", []),
          do: Enum.filter(message["filenames"], &dynamic_library?/1) ++ libraries,
          else: libraries

      _other ->
        libraries
    end
  end

  defp line(text, libraries) do
    unless String.starts_with?(String.trim_leading(text), "Finished "),
      do: Mix.shell().info(text)

    libraries
  end

  defp dynamic_library?(file), do: Path.extname(file) in [".so", ".dylib"]
end
