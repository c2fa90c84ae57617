defmodule OpenAgentsPolicy.NifBuildTest do
  # The NIF compiler (lib/mix/tasks/compile.openagents_policy_nif.exs and its
  # jobs, lib/mix/openagents_policy/) and the loader, driven as a developer
  # drives them: `mix compile` and `mix run` in a copy of this project, with
  # real cargo builds. Each test holds one promise of the compiler and the
  # loader (OPENAGENTS_BUILD_TEST_SOURCE runs them against an export of
  # another revision).
  #
  # async: true, as other modules go: its tests run one at a time, in one
  # copy (see ProjectCopy.fresh!/0), and touch nothing of this VM.
  use ExUnit.Case, async: true

  import OpenAgentsPolicy.Test.ProjectCopy

  @moduletag timeout: 900_000
  # A hang is a failure too: a compile that has not ended after this
  # long counts as one (a clean compile of a copy takes seconds; cargo's part
  # is warm after the first run).
  @hang 240_000

  # A valid library other than the one a copy builds: the one this VM runs.
  defp running_library, do: OpenAgentsPolicy.Native.library_file()

  defp compile!(dir, env \\ []) do
    {status, output} = mix(dir, ["compile"], env)
    assert status == 0, "mix compile failed (#{inspect(status)}):\n#{output}"
    output
  end

  # The copy's answer, with what `mix run` printed on the way (its compile
  # and cargo's) in the failure message.
  defp assert_answer!(dir, expected, env \\ []) do
    {status, output} = mix(dir, ["run", "-e", ask_expression()], env)
    assert status == 0, "mix run failed (#{inspect(status)}):\n#{output}"
    assert answer(output) == expected, "expected #{expected}; mix run printed:\n#{output}"
  end

  describe "cargo decides what is stale" do
    test "an edit saved while cargo was building is built by the next compile" do
      dir = fresh!()
      assert_answer!(dir, "active")

      # The edit lands after cargo started the build it raced and before the
      # install: its modification time is that of the library cargo linked
      # (the build's last step), to the nanosecond. Not the installed copy's:
      # File.cp/2 writes that one's times back in whole seconds, which can
      # fall before the build began. Cargo knows its build predates the edit.
      file = edit_decision!(dir, :stopping)
      linked = Path.join([target_dir(), "debug", "libopenagents_policy_nif.so"])
      {_, 0} = System.cmd("touch", ["-r", linked, file])

      assert_answer!(dir, "stopping")
    end

    test "a no-op compile installs nothing and recompiles no Elixir module" do
      dir = fresh!()
      compile!(dir)
      library = installed!(dir)
      before = File.stat!(library, time: :posix)

      output = compile!(dir)
      refute output =~ "Compiling", output
      refute output =~ "Installed", output
      assert installed!(dir) == library
      assert File.stat!(library, time: :posix) == before
    end
  end

  describe "a library that cannot load fails the build, fast and loud" do
    setup do
      dir = fresh!()
      bad = Path.join(dir, "bad")
      File.mkdir_p!(bad)
      good = File.read!(running_library())

      # Cut short: the loader maps pages past the end of the file (SIGBUS).
      truncated = Path.join(bad, "truncated.so")
      File.write!(truncated, binary_part(good, 0, div(byte_size(good), 5)))

      # The same library, its ELF header saying aarch64 (e_machine = 183).
      <<head::binary-18, _machine::binary-2, tail::binary>> = good
      foreign = Path.join(bad, "aarch64.so")
      File.write!(foreign, <<head::binary, 183::little-16, tail::binary>>)

      %{dir: dir, truncated: truncated, foreign: foreign}
    end

    defp assert_fails_loudly(dir, library) do
      {status, output} = mix(dir, ["compile"], [{"OPENAGENTS_POLICY_NIF_PATH", library}], @hang)
      refute status == :timeout, "mix compile hung (killed after #{@hang} ms):\n#{output}"
      assert status != 0
      assert output =~ "The NIF library #{library} cannot be loaded", output
      output
    end

    test "from a clean build: the path and the loader's error", %{dir: dir} = paths do
      output = assert_fails_loudly(dir, paths.foreign)
      assert output =~ "Failed to load NIF library"
      assert output =~ "an ELF 64-bit file for aarch64"

      output = assert_fails_loudly(dir, paths.truncated)
      assert output =~ "killed by signal"
    end

    test "from an incremental build, and the previous build stays in place",
         %{dir: dir} = paths do
      compile!(dir, [{"OPENAGENTS_POLICY_NIF_PATH", running_library()}])
      library = installed!(dir)

      # The foreign file first: a14bde8's compile hung on it here (the
      # truncated one crashed its VM with SIGBUS instead).
      assert_fails_loudly(dir, paths.foreign)
      assert_fails_loudly(dir, paths.truncated)

      assert installed(dir) == [library]
      assert_answer!(dir, "active", [{"OPENAGENTS_POLICY_NIF_PATH", running_library()}])
    end
  end

  describe "cargo's own settings say where it builds" do
    # Builds a fresh copy with `.cargo/config.toml` holding `config` (none if
    # nil) and `env`, CARGO_TARGET_DIR unset; checks that what was installed
    # is the library cargo built at `artifact` (under the target directory).
    defp assert_built_into(config, env, artifact) do
      dir = fresh!()

      if config do
        File.mkdir_p!(Path.join(dir, ".cargo"))
        File.write!(Path.join(dir, ".cargo/config.toml"), "[build]\n" <> config)
      end

      env = [{"CARGO_TARGET_DIR", nil} | env]
      compile!(dir, env)
      artifact = Path.join([target_dir() | artifact] ++ ["libopenagents_policy_nif.so"])
      assert File.read!(installed!(dir)) == File.read!(artifact)
      assert_answer!(dir, "active", env)
    end

    test "CARGO_BUILD_TARGET_DIR" do
      assert_built_into(nil, [{"CARGO_BUILD_TARGET_DIR", target_dir()}], ["debug"])
    end

    test ".cargo/config.toml's [build] target-dir" do
      assert_built_into("target-dir = #{inspect(target_dir())}\n", [], ["debug"])
    end

    test ".cargo/config.toml's [build] target" do
      {rustc, 0} = System.cmd("rustc", ["-vV"])
      [_, host] = Regex.run(~r/^host: (\S+)$/m, rustc)
      config = "target = #{inspect(host)}\ntarget-dir = #{inspect(target_dir())}\n"
      assert_built_into(config, [], [host, "debug"])
    end
  end

  describe "a prebuilt library is installed whenever its content differs" do
    test "a replacement older than the installed library is installed, and only it ships" do
      dir = fresh!()
      prebuilt = Path.join(dir, "prebuilt/libopenagents_policy_nif.so")
      File.mkdir_p!(Path.dirname(prebuilt))
      env = [{"OPENAGENTS_POLICY_NIF_PATH", prebuilt}]

      first = File.read!(running_library())
      File.write!(prebuilt, first)
      compile!(dir, env)
      assert File.read!(installed!(dir)) == first

      # Another build of it, as downloaded or untarred: an old mtime. (Bytes
      # after the end of an ELF file are ignored by the loader.)
      second = first <> "another build"
      File.write!(prebuilt, second)
      File.touch!(prebuilt, {{2001, 1, 1}, {0, 0, 0}})

      output = compile!(dir, env)
      assert output =~ "Installing prebuilt NIF #{prebuilt}"
      assert File.read!(installed!(dir)) == second
      assert_answer!(dir, "active", env)

      # A release carries the current build alone.
      {0, _} = mix(dir, ["release", "--overwrite", "--quiet"], env)

      shipped =
        Path.wildcard(Path.join(dir, "_build/prod/rel/*/lib/openagents_policy-*/priv/native/*"))

      assert [library] = shipped
      assert File.read!(library) == second
    end
  end

  describe "cargo flags" do
    test "--locked: a build never rewrites Cargo.lock" do
      dir = fresh!()
      lock = File.read!(Path.join(dir, "Cargo.lock"))
      # A version bump that Cargo.lock does not record yet.
      bump = &String.replace(&1, ~s(version = "0.1.0"), ~s(version = "0.1.1"))

      dir
      |> Path.join("Cargo.toml")
      |> File.read!()
      |> bump.()
      |> then(&File.write!(Path.join(dir, "Cargo.toml"), &1))

      {status, output} = mix(dir, ["compile"])
      assert status != 0, output
      assert output =~ "--locked", output
      assert File.read!(Path.join(dir, "Cargo.lock")) == lock
    end
  end

  describe "a Rust edit served by a running VM" do
    # The VM under test: `mix run` in the copy, answering on stdout what it
    # is asked on stdin. `recompile()` is IEx's; Phoenix's code reloader runs
    # the same compilers when :openagents_policy is in `reloadable_apps` and
    # :openagents_policy_nif in `reloadable_compilers`.
    @driver """
    alias OpenAgents.Delegations.Target
    serve = fn serve ->
      case IO.gets("") do
        "ask\n" ->
          library = Path.basename(OpenAgentsPolicy.Native.library_file())
          IO.puts("answer=\#{Target.box_lifecycle("idle")} library=\#{library} vm=\#{System.pid()}")
          serve.(serve)

        "recompile\n" ->
          IO.puts("recompiled=\#{inspect(IEx.Helpers.recompile())}")
          serve.(serve)

        _eof ->
          :ok
      end
    end
    serve.(serve)
    """

    defp request(port, command, reply) do
      Port.command(port, command <> "\n")
      await(port, reply, [])
    end

    defp await(port, reply, seen) do
      receive do
        {^port, {:data, {:eol, line}}} ->
          case Regex.run(reply, line, capture: :all_but_first) do
            nil -> await(port, reply, [line | seen])
            captures -> captures
          end

        {^port, {:data, {:noeol, part}}} ->
          await(port, reply, [part | seen])

        {^port, {:exit_status, status}} ->
          flunk("the VM exited (#{status}):\n" <> Enum.join(Enum.reverse(seen), "\n"))
      after
        @hang -> flunk("no reply after #{@hang} ms:\n" <> Enum.join(Enum.reverse(seen), "\n"))
      end
    end

    defp ask(port), do: request(port, "ask", ~r/^answer=(\w+) library=(\S+) vm=(\d+)$/)

    test "an edit, then its revert, each served by the same VM after recompile()" do
      dir = fresh!()
      compile!(dir)
      port = open(dir, ["run", "-e", @driver], [], [{:line, 65_536}])
      on_exit(fn -> kill_tree(port) end)

      [answer, first, vm] = ask(port)
      assert answer == "active"

      edit_decision!(dir, :stopping)
      assert request(port, "recompile", ~r/^recompiled=(.*)$/) == [":ok"]
      [answer, second, ^vm] = ask(port)
      assert answer == "stopping"
      assert second != first
      # The previous build is gone; the new one is the only one installed.
      assert Enum.map(installed(dir), &Path.basename/1) == [second]

      edit_decision!(dir, :active)
      assert request(port, "recompile", ~r/^recompiled=(.*)$/) == [":ok"]
      assert [answer, _third, ^vm] = ask(port)
      assert answer == "active"
    end
  end

  describe "issue 16: the build path's faults" do
    # Each test failed on the compiler of 4accd0c (before the lock, the
    # keyed compiler cache, content-checked installs and checkout marks).

    test "two compiles of one checkout at once both succeed, and one of their libraries is installed" do
      dir = fresh!()
      good = File.read!(running_library())
      prebuilt = Path.join(dir, "prebuilt")
      File.mkdir_p!(prebuilt)

      # Each round, two compiles of the NIF at once, each with a library of
      # its own (bytes after the end of an ELF file are ignored by the
      # loader), so both have something to install.
      for round <- 1..4 do
        libraries =
          for side <- ~w(a b) do
            file = Path.join(prebuilt, "#{round}#{side}.so")
            File.write!(file, good <> "round #{round} side #{side}")
            file
          end

        results =
          libraries
          |> Enum.map(fn library ->
            Task.async(fn ->
              mix(dir, ["compile.openagents_policy_nif"], [
                {"OPENAGENTS_POLICY_NIF_PATH", library}
              ])
            end)
          end)
          |> Task.await_many(:infinity)

        for {status, output} <- results,
            do: assert(status == 0, "round #{round}: a compile failed:\n#{output}")

        installed = File.read!(installed!(dir))
        assert installed in Enum.map(libraries, &File.read!/1), "round #{round}"
      end
    end

    test "the compiler cache is keyed by OTP and Elixir, and a damaged one is compiled again" do
      dir = fresh!()
      env = [{"OPENAGENTS_POLICY_NIF_PATH", running_library()}]
      compile!(dir, env)

      assert [cache] = Path.wildcard(Path.join(dir, "_build/nif_compiler/*.etf"))
      assert Path.basename(cache) =~ "otp#{System.otp_release()}"
      assert Path.basename(cache) =~ "elixir#{System.version()}"

      # Cut short, then a term that is not a module: each is compiled again.
      etf = File.read!(cache)
      File.write!(cache, binary_part(etf, 0, div(byte_size(etf), 2)))
      compile!(dir, env)
      File.write!(cache, :erlang.term_to_binary([{Mix.Tasks.Compile.OpenagentsPolicyNif, "no"}]))
      compile!(dir, env)
      assert File.read!(cache) == etf
    end

    test "an installed library damaged on disk is replaced" do
      dir = fresh!()
      env = [{"OPENAGENTS_POLICY_NIF_PATH", running_library()}]
      compile!(dir, env)
      library = installed!(dir)
      good = File.read!(library)

      # The same name and size, other bytes.
      File.write!(library, :binary.copy(<<0>>, byte_size(good)))
      compile!(dir, env)
      assert File.read!(installed!(dir)) == good
      assert_answer!(dir, "active", env)
    end

    test "another checkout's library, in a shared target directory, is never installed" do
      dir = fresh!()
      assert_answer!(dir, "active")

      # A second checkout of the project at another path, with the edit;
      # both build into the same CARGO_TARGET_DIR (target_dir/0).
      other = Path.join(Path.dirname(dir), "other-checkout")
      File.rm_rf!(other)
      File.mkdir_p!(other)

      files =
        for f <- ~w(mix.exs .formatter.exs Cargo.toml Cargo.lock lib native),
            do: Path.join(dir, f)

      {_, 0} = System.cmd("cp", ["-a" | files] ++ [other])
      copy_vendor_helper!(dir, other)

      {_, 0} =
        System.cmd("find", [Path.join(other, "native"), "-type", "f", "-exec", "touch", "{}", "+"])

      edit_decision!(other, :stopping)
      assert_answer!(other, "stopping")

      assert_answer!(dir, "active")
      assert_answer!(other, "stopping")
    end
  end
end
