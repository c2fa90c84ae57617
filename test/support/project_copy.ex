defmodule OpenAgentsPolicy.Test.ProjectCopy do
  @moduledoc false
  # Copies of this project, built and run by real `mix` and `cargo` processes,
  # for the tests of the build (the NIF compiler, the loader, a Rust edit
  # served by a running VM). A copy holds what a dependent gets (mix.exs,
  # lib/, native/, Cargo.toml, Cargo.lock), so an edit never touches the
  # project itself, and dev/vendor.exs (see copy_vendor_helper!/2).
  #
  # The project copied is this one, or OPENAGENTS_BUILD_TEST_SOURCE: pointing
  # it at an export of an older revision runs these tests against that
  # revision's compiler and loader.
  #
  # Copies share one cargo target directory per toolchain, so cargo builds
  # the dependencies once and later runs are warm. NIFs are built with the
  # debug profile (no LTO). The tests that use copies run one at a time.

  @files ~w(mix.exs .formatter.exs Cargo.toml Cargo.lock lib native)

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
  A fresh copy, at the one path every copy takes, and every Rust source in it
  stamped now.

  One path, because cargo names a cdylib without a hash: two copies sharing
  a target directory would share `debug/libopenagents_policy_nif.so`, and a
  copy cargo finds fresh would be handed the other's build. Stamped now,
  because cargo judges a path's sources by modification time: a copy of the
  original made after a test edited it would otherwise read as built.
  """
  def fresh! do
    dir = Path.join(base(), "project")
    File.rm_rf!(dir)
    File.mkdir_p!(dir)
    source = source()
    files = for file <- @files, File.exists?(Path.join(source, file)), do: Path.join(source, file)
    {_, 0} = System.cmd("cp", ["-a" | files] ++ [dir])
    copy_vendor_helper!(source, dir)
    native = Path.join(dir, "native")
    {_, 0} = System.cmd("find", [native, "-type", "f", "-exec", "touch", "{}", "+"])
    dir
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
  Runs `mix args` in `dir` (MIX_ENV=prod, the debug NIF profile, the shared
  target directory, no prebuilt library) with `env` on top (a value of `nil`
  unsets a variable). Returns `{status, output}`, stderr included; status is
  `:timeout` when it had not finished after `timeout` ms, and it is killed.
  """
  def mix(dir, args, env \\ [], timeout \\ 300_000) do
    port = open(dir, args, env, [])
    collect(port, [], System.monotonic_time(:millisecond) + timeout)
  end

  @doc "Starts `mix args` in `dir` as `mix/4` runs it, and returns its port (`port_opts` added)."
  def open(dir, args, env, port_opts) do
    base_env = [
      {"MIX_ENV", "prod"},
      {"OPENAGENTS_POLICY_NIF_PROFILE", "debug"},
      {"CARGO_TARGET_DIR", target_dir()},
      {"OPENAGENTS_POLICY_NIF_PATH", nil},
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

  @doc "The NIF libraries installed in `dir`'s prod build."
  def installed(dir),
    do:
      Path.wildcard(
        Path.join(dir, "_build/prod/lib/openagents_policy/priv/native/libopenagents_policy_nif*")
      )

  @doc "The one NIF library installed in `dir`'s prod build (fails when there is not exactly one)."
  def installed!(dir) do
    case installed(dir) do
      [file] -> file
      files -> raise "expected one installed NIF library in #{dir}, found #{inspect(files)}"
    end
  end

  @doc "An expression for `mix run -e` that prints the answer of the edited decision."
  def ask_expression,
    do: ~s|IO.puts("answer=" <> OpenAgents.Delegations.Target.box_lifecycle("idle"))|

  @doc "The answer `mix run -e ask_expression()` printed."
  def answer(output) do
    case Regex.run(~r/^answer=(\w+)$/m, output) do
      [_, answer] -> answer
      nil -> raise "no answer in the output:\n#{output}"
    end
  end

  @doc """
  Edits a decision in the copy's Rust core: a Box that is `idle` reads
  `stopping` (`to: :stopping`), or `active` again (`to: :active`).
  """
  def edit_decision!(dir, to) do
    file = Path.join(dir, "native/openagents_policy/src/target.rs")
    source = File.read!(file)
    original = "Self::Ready | Self::Idle | Self::Running => Lifecycle::Active,"

    edited =
      "Self::Idle => Lifecycle::Stopping,\n            Self::Ready | Self::Running => Lifecycle::Active,"

    {from, into} = if to == :stopping, do: {original, edited}, else: {edited, original}
    true = String.contains?(source, from)
    File.write!(file, String.replace(source, from, into))
    file
  end
end
