defmodule OpenAgentsPolicy.Test.ProjectCopy do
  @moduledoc false
  # Copies of this project, built and run by real `mix` and `cargo` processes,
  # for the test of the source build (rustler's compiler, which
  # `use RustlerPrecompiled` runs with `force_build` in a checkout) and the
  # load. A copy holds what a checkout builds from (mix.exs, lib/, priv/,
  # native/, Cargo.toml, Cargo.lock), so an edit never touches the project
  # itself, and dev/vendor.exs (see copy_vendor_helper!/2).
  #
  # The project copied is this one, or OPENAGENTS_BUILD_TEST_SOURCE: pointing
  # it at an export of another revision runs the test against that
  # revision's build.
  #
  # A copy is built and run as a developer's checkout is: MIX_ENV=dev. Its
  # config/config.exs sets rustler's own `mode: :debug` for
  # OpenAgentsPolicy.Native (no LTO: a rebuild takes seconds). Copies share
  # one cargo target directory per OTP release, as two checkouts of a
  # developer who sets CARGO_TARGET_DIR do, and one build of the Elixir
  # dependencies (copied into each copy's _build).

  @files ~w(mix.exs .formatter.exs Cargo.toml Cargo.lock lib priv native)
  @env "dev"

  @config """
  import Config

  # rustler's own setting (read by `use Rustler`, which
  # `use RustlerPrecompiled` runs with force_build): a debug build, no LTO.
  config :openagents_policy, OpenAgentsPolicy.Native, mode: :debug
  """

  @doc "The project the copies are made from."
  def source,
    do: System.get_env("OPENAGENTS_BUILD_TEST_SOURCE") || Path.dirname(Mix.Project.project_file())

  @doc "Where copies live: under the build path, one directory per OTP release."
  def base, do: Path.join(Mix.Project.build_path(), "project_copies-otp#{System.otp_release()}")

  @doc "The cargo target directory the copies build into, unless a test says otherwise."
  def target_dir do
    case System.get_env("CARGO_TARGET_DIR") do
      nil -> Path.join(base(), "target")
      dir -> Path.join(dir, "project_copies")
    end
  end

  @doc """
  A fresh copy named `name`, with every Rust source in it stamped now, and
  the Elixir dependencies already built.
  """
  def fresh!(name) do
    dir = Path.join(base(), name)
    copy!(source(), dir)
    deps = deps_build!()
    File.mkdir_p!(Path.join(dir, "_build"))
    {_, 0} = System.cmd("cp", ["-a", Path.join(deps, @env), Path.join(dir, "_build")])
    dir
  end

  # The project's files from `source` into a new `dir` (removed first), the
  # debug config written, the Rust sources stamped now.
  defp copy!(source, dir) do
    File.rm_rf!(dir)
    File.mkdir_p!(dir)
    files = for file <- @files, File.exists?(Path.join(source, file)), do: Path.join(source, file)
    {_, 0} = System.cmd("cp", ["-a" | files] ++ [dir])
    copy_vendor_helper!(source, dir)
    File.mkdir_p!(Path.join(dir, "config"))
    File.write!(Path.join(dir, "config/config.exs"), @config)
    native = Path.join(dir, "native")
    {_, 0} = System.cmd("find", [native, "-type", "f", "-exec", "touch", "{}", "+"])
    :ok
  end

  # The `_build` of a copy whose dependencies, and nothing else, are built
  # (`mix deps.compile`): copied into each fresh copy. Made once; Mix
  # rebuilds in a copy whatever of it is stale.
  defp deps_build! do
    seed = Path.join(base(), "deps_seed")
    build = Path.join(seed, "_build")

    unless File.dir?(Path.join([build, @env, "lib", "rustler"])) do
      copy!(source(), seed)

      case mix(seed, ["deps.compile"]) do
        {0, _output} -> :ok
        {status, output} -> raise "mix deps.compile failed (#{inspect(status)}):\n#{output}"
      end
    end

    build
  end

  @doc """
  Copies dev/vendor.exs, the offline-mirror helper that mix.exs loads where
  it exists, from `source` into the copy at `dir`. A dependent never has it
  (it is not in the package), but this machine has no Hex either: without
  it a copy could not even read its own test dependencies' requirements.
  """
  def copy_vendor_helper!(source, dir) do
    helper = Path.join(source, "dev/vendor.exs")

    if File.regular?(helper) do
      File.mkdir_p!(Path.join(dir, "dev"))
      File.cp!(helper, Path.join(dir, "dev/vendor.exs"))
    end
  end

  @doc """
  Runs `mix args` in `dir` (MIX_ENV=dev, the shared target directory) with
  `env` on top (a value of `nil` unsets a variable). Returns
  `{status, output}`, stderr included; status is `:timeout` when it had not
  finished after `timeout` ms, and it is killed.
  """
  def mix(dir, args, env \\ [], timeout \\ 300_000) do
    port = open(dir, args, env, [])
    collect(port, [], System.monotonic_time(:millisecond) + timeout)
  end

  @doc "Starts `mix args` in `dir` as `mix/4` runs it, and returns its port (`port_opts` added)."
  def open(dir, args, env, port_opts) do
    base_env = [
      {"MIX_ENV", @env},
      {"CARGO_TARGET_DIR", target_dir()},
      # Whatever this VM was started with: the copy builds from source.
      {"OPENAGENTS_POLICY_BUILD", nil},
      {"RUSTLER_PRECOMPILED_FORCE_BUILD_ALL", nil},
      {"CARGO_BUILD_TARGET_DIR", nil},
      {"MIX_BUILD_ROOT", nil},
      {"MIX_BUILD_PATH", nil},
      {"MIX_EXS", nil}
    ]

    env =
      base_env
      |> Map.new()
      |> Map.merge(Map.new(env))
      |> Enum.map(fn {k, v} -> {String.to_charlist(k), v && String.to_charlist(v)} end)
      |> Enum.map(fn
        {k, nil} -> {k, false}
        kv -> kv
      end)

    Port.open(
      {:spawn_executable, System.find_executable("mix")},
      [:binary, :exit_status, :stderr_to_stdout, args: args, cd: dir, env: env] ++ port_opts
    )
  end

  defp collect(port, acc, deadline) do
    left = max(deadline - System.monotonic_time(:millisecond), 0)

    receive do
      {^port, {:data, data}} ->
        collect(port, [acc, data], deadline)

      {^port, {:exit_status, status}} ->
        {status, IO.iodata_to_binary(acc)}
    after
      left ->
        kill_tree(port)
        {:timeout, IO.iodata_to_binary(acc)}
    end
  end

  @doc "Kills the VM behind `port` and its children (cargo, erl), by pid."
  def kill_tree(port) do
    with {:os_pid, pid} <- Port.info(port, :os_pid) do
      children =
        case System.find_executable("pgrep") do
          nil -> []
          pgrep -> pgrep |> System.cmd(["-P", "#{pid}"]) |> elem(0) |> String.split()
        end

      # The shell's kill: no procps needed.
      System.cmd("sh", ["-c", Enum.join(["kill -KILL #{pid}" | children], " ")])
    end

    Port.close(port)
  catch
    # The port, and so the VM, is already gone.
    :error, :badarg -> :ok
  end
end
