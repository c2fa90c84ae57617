defmodule Mix.Tasks.Compile.OpenagentsPolicyNif do
  @moduledoc """
  Builds the Rust NIF crate `openagents_policy_nif` and installs it where
  `OpenAgentsPolicy.Native` loads it from.

  This is a cut-down version of what the `rustler` Mix package does; that
  package lives on hex.pm, which this project cannot use, so the library
  carries its own compiler. It runs before the Elixir compiler (see
  `:compilers` in mix.exs), because modules of the library call the NIF while
  they are being compiled.

  What it does, in the project root (the directory of the current project's
  mix.exs, which is also the right place when the library is a `path:` or
  `git:` dependency):

    * if no Rust input (`Cargo.toml`, `Cargo.lock`, `native/**/*.rs`,
      `native/**/Cargo.toml`) is newer than the installed library, and the
      library was built the same way last time, it does nothing;
    * otherwise it runs `cargo build -p openagents_policy_nif` (in `--release`
      unless `OPENAGENTS_POLICY_NIF_PROFILE=debug`), streaming cargo's output,
      and copies the library from cargo's target directory (`target/`, or
      `$CARGO_TARGET_DIR`) to `priv/native/libopenagents_policy_nif.so` under
      `Mix.Project.app_path/0`. macOS builds a `.dylib`; it is installed under
      the `.so` name, which is what `:erlang.load_nif/2` looks for.

  With `OPENAGENTS_POLICY_NIF_PATH=/path/to/libopenagents_policy_nif.so` cargo
  is not run at all: that prebuilt library is installed instead.

  The source tree must not have a `priv/` directory: Mix would link it into
  the build over the installed library.
  """
  use Mix.Task.Compiler

  @crate "openagents_policy_nif"
  @installed "priv/native/lib#{@crate}.so"

  @impl true
  def run(args) do
    root = Path.dirname(Mix.Project.project_file())
    dest = Path.join(Mix.Project.app_path(), @installed)
    {origin, inputs} = origin(root)

    if "--force" in args or stale?(dest, origin, inputs) do
      built = produce(origin, root)
      File.mkdir_p!(Path.dirname(dest))
      # Copy then rename: a VM that has the old library loaded keeps its file.
      File.cp!(built, dest <> ".tmp")
      File.rename!(dest <> ".tmp", dest)
      File.mkdir_p!(Path.dirname(manifest()))
      File.write!(manifest(), :erlang.term_to_binary(origin))
      {:ok, []}
    else
      {:noop, []}
    end
  end

  @impl true
  def manifests, do: [manifest()]

  @impl true
  def clean do
    priv = Path.join(Mix.Project.app_path(), "priv")
    File.rm_rf!(Path.join(priv, "native"))
    File.rmdir(priv)
    File.rm(manifest())
    :ok
  end

  defp manifest, do: Path.join(Mix.Project.manifest_path(), "compile.#{@crate}")

  # Where the library comes from, and the files whose change means a rebuild.
  defp origin(root) do
    case System.get_env("OPENAGENTS_POLICY_NIF_PATH") do
      nil ->
        inputs =
          [Path.join(root, "Cargo.toml"), Path.join(root, "Cargo.lock")] ++
            Path.wildcard(Path.join(root, "native/**/{*.rs,Cargo.toml}"))

        {{:cargo, profile()}, inputs}

      path ->
        path = Path.expand(path)

        unless File.regular?(path) do
          Mix.raise("OPENAGENTS_POLICY_NIF_PATH is set to #{path}, which is not a file")
        end

        {{:prebuilt, path}, [path]}
    end
  end

  defp profile do
    case System.get_env("OPENAGENTS_POLICY_NIF_PROFILE", "release") do
      profile when profile in ["release", "debug"] -> profile
      other -> Mix.raise("OPENAGENTS_POLICY_NIF_PROFILE must be release or debug, got: #{other}")
    end
  end

  defp stale?(dest, origin, inputs) do
    case File.stat(dest, time: :posix) do
      {:ok, %{mtime: installed}} ->
        last_origin() != origin or
          Enum.any?(
            inputs,
            &match?({:ok, %{mtime: t}} when t > installed, File.stat(&1, time: :posix))
          )

      {:error, _} ->
        true
    end
  end

  defp last_origin do
    case File.read(manifest()) do
      {:ok, binary} -> :erlang.binary_to_term(binary)
      {:error, _} -> nil
    end
  end

  defp produce({:prebuilt, path}, _root) do
    Mix.shell().info("Installing prebuilt NIF #{path}")
    path
  end

  defp produce({:cargo, profile}, root) do
    cargo =
      System.find_executable("cargo") ||
        Mix.raise("""
        cargo was not found on PATH, so the #{@crate} NIF cannot be built.
        Install Rust with rustup (https://rustup.rs), or point
        OPENAGENTS_POLICY_NIF_PATH at a prebuilt lib#{@crate}.so.
        """)

    args = ["build", "-p", @crate] ++ if(profile == "release", do: ["--release"], else: [])
    Mix.shell().info("Compiling NIF #{@crate} (cargo #{Enum.join(args, " ")})")

    case System.cmd(cargo, args, cd: root, into: IO.stream(), stderr_to_stdout: true) do
      {_, 0} ->
        :ok

      {_, status} ->
        Mix.raise("""
        `cargo #{Enum.join(args, " ")}` failed with exit status #{status} (output above).
        To use a prebuilt library instead, set OPENAGENTS_POLICY_NIF_PATH.
        """)
    end

    target = System.get_env("CARGO_TARGET_DIR") || "target"
    ext = if match?({:unix, :darwin}, :os.type()), do: "dylib", else: "so"
    Path.expand(Path.join([target, profile, "lib#{@crate}.#{ext}"]), root)
  end
end
