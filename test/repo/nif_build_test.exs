defmodule OpenAgentsPolicy.NifBuildTest do
  # The source build of a checkout, driven as a developer drives it: `mix
  # compile`, `mix run` and `recompile()` in a copy of this project, with
  # real cargo builds. In a checkout (no checksum file) OpenAgentsPolicy.Native's
  # `use RustlerPrecompiled` has `force_build: true`, so rustler's compiler
  # builds the crate as Native compiles (`cargo rustc`, into the target
  # directory `cargo metadata` names) and copies the library into priv/native;
  # Native's generated on_load loads it. Each test holds one promise of that
  # build (OPENAGENTS_BUILD_TEST_SOURCE runs them against an export of
  # another revision).
  #
  # async: true, as other modules go: its tests run one at a time, in one
  # copy (see ProjectCopy.fresh!/0), and touch nothing of this VM.
  use ExUnit.Case, async: true
  @moduletag :repo

  import OpenAgentsPolicy.Test.ProjectCopy

  @moduletag timeout: 900_000
  # A hang is a failure too: a compile that has not ended after this long
  # counts as one (a compile of a fresh copy takes seconds once cargo's
  # dependencies are built; the first, a minute or two).
  @hang 240_000

  defp compile!(dir, env \\ []) do
    {status, output} = mix(dir, ["compile"], env, @hang)
    assert status == 0, "mix compile failed (#{inspect(status)}):\n#{output}"
    output
  end

  # The copy's answer, with what `mix run` printed on the way (its compile
  # and cargo's) in the failure message.
  defp assert_answer!(dir, expected, env \\ []) do
    {status, output} = mix(dir, ["run", "-e", ask_expression()], env, @hang)
    assert status == 0, "mix run failed (#{inspect(status)}):\n#{output}"
    assert answer(output) == expected, "expected #{expected}; mix run printed:\n#{output}"
  end

  describe "a Rust edit served by a running VM" do
    # The VM under test: `mix run` in the copy, answering on stdout what it
    # is asked on stdin. `recompile()` is IEx's (Mix's compilers: Phoenix's
    # code reloader runs the same when :openagents_policy is among its
    # reloadable apps); `r` is IEx's `r/1` of Native, which loads the new
    # version over the current one. A log handler forwards the code server's
    # report of a failed on_load, which the VM prints.
    @driver """
    defmodule Forward do
      def log(event, %{config: %{to: pid}}), do: send(pid, {:logged, event})
    end

    :ok = :logger.add_handler(:forward, Forward, %{config: %{to: self()}})
    alias OpenAgents.Delegations.Target

    on_load_report = fn ->
      receive do
        {:logged, %{msg: {:report, %{args: [OpenAgentsPolicy.Native, result, _]}}}} -> result
        {:logged, %{msg: {format, [OpenAgentsPolicy.Native, result, _]}}} when is_list(format) -> result
      after
        60_000 -> :no_report
      end
    end

    serve = fn serve ->
      case IO.gets("") do
        "ask\\n" ->
          digest = OpenAgentsPolicy.fingerprint().decision_digest
          IO.puts("answer=\#{Target.box_lifecycle("idle")} digest=\#{digest} vm=\#{System.pid()}")
          serve.(serve)

        "recompile\\n" ->
          IO.puts("recompiled=\#{inspect(IEx.Helpers.recompile())}")
          serve.(serve)

        "r\\n" ->
          reloaded = IEx.Helpers.r(OpenAgentsPolicy.Native)
          IO.puts("r=\#{inspect(reloaded)} on_load=\#{inspect(on_load_report.())}")
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

    defp ask(port), do: request(port, "ask", ~r/^answer=(\w+) digest=(\w+) vm=(\d+)$/)
    defp recompile(port), do: request(port, "recompile", ~r/^recompiled=(.*)$/)

    test "an edit is refused by r/1 over the loaded library, then served by recompile(); " <>
           "its revert too, in the same VM" do
      dir = fresh!()
      compile!(dir)
      port = open(dir, ["run", "-e", @driver], [], [{:line, 65_536}])
      on_exit(fn -> kill_tree(port) end)

      [answer, digest, vm] = ask(port)
      assert answer == "active"

      edit_decision!(dir, :stopping)

      # IEx's order: the new version over the current one, which holds the
      # library. rustler's entry has no upgrade callback, so the VM refuses
      # it; the old version answers on.
      [reloaded, on_load] = request(port, "r", ~r/^r=(.*) on_load=(.*)$/)
      assert reloaded =~ "OpenAgentsPolicy.Native"
      assert on_load =~ ~r/^\{:error, \{:upgrade, .*Upgrade not supported by this NIF library/
      assert ask(port) == ["active", digest, vm]

      # Mix's order: the stale module purged and deleted, the new one a
      # fresh load of the new library.
      assert recompile(port) == [":ok"]
      [answer, edited_digest, ^vm] = ask(port)
      assert answer == "stopping"
      assert edited_digest != digest

      edit_decision!(dir, :active)
      assert recompile(port) == [":ok"]
      assert ask(port) == ["active", digest, vm]
    end
  end

  describe "cargo decides what is stale" do
    test "an edit saved as cargo linked is built by the next compile" do
      dir = fresh!()
      assert_answer!(dir, "active")

      # The edit lands after cargo read the sources it built, as cargo
      # links: its modification time is that of the library cargo linked,
      # to the nanosecond (the build's last step). Both Mix (the crate's
      # files are Native's external resources) and cargo (which stamps a
      # build with the time it started) must take it as newer than the
      # build.
      file = edit_decision!(dir, :stopping)
      {_, 0} = System.cmd("touch", ["-r", linked(), file])

      assert_answer!(dir, "stopping")
    end
  end

  describe "a library that cannot load" do
    # A NIF added on the Rust side whose stub OpenAgentsPolicy.Native lacks:
    # cargo builds it, and the VM refuses to load a library that names a
    # function its module does not have.
    @unstubbed """

    /// A NIF whose stub OpenAgentsPolicy.Native lacks (NifBuildTest).
    #[rustler::nif]
    fn unstubbed_probe() -> u8 {
        0
    }
    """

    test "fails the compile fast, in the loader's own words; the fix is served by the next one" do
      dir = fresh!()
      lib_rs = Path.join(dir, "native/openagents_policy_nif/src/lib.rs")
      original = File.read!(lib_rs)
      File.write!(lib_rs, original <> @unstubbed)

      {status, output} = mix(dir, ["compile"], [], @hang)
      refute status == :timeout, "mix compile hung (killed after #{@hang} ms):\n#{output}"
      assert status != 0, output
      assert output =~ "Function not found", output
      assert output =~ "unstubbed_probe/0", output

      File.write!(lib_rs, original)
      assert_answer!(dir, "active")
    end
  end

  describe "cargo's own settings say where it builds" do
    # Builds a fresh copy with `.cargo/config.toml` holding `config` (none if
    # nil) and `env`, CARGO_TARGET_DIR unset. The copy's sources are stamped
    # new, so cargo builds them again: the library it links into
    # target_dir/0 is this build's (linked after the compile started), the
    # one installed, and the workspace's own target/ is never made.
    defp assert_built_into(config, env) do
      dir = fresh!()

      if config do
        File.mkdir_p!(Path.join(dir, ".cargo"))
        File.write!(Path.join(dir, ".cargo/config.toml"), "[build]\n" <> config)
      end

      env = [{"CARGO_TARGET_DIR", nil} | env]
      started = System.os_time(:second)
      compile!(dir, env)

      assert File.stat!(linked(), time: :posix).mtime >= started
      assert File.read!(installed!(dir)) == File.read!(linked())
      refute File.exists?(Path.join(dir, "target"))
      assert_answer!(dir, "active", env)
    end

    test "CARGO_BUILD_TARGET_DIR" do
      assert_built_into(nil, [{"CARGO_BUILD_TARGET_DIR", target_dir()}])
    end

    test ".cargo/config.toml's [build] target-dir" do
      assert_built_into("target-dir = #{inspect(target_dir())}\n", [])
    end
  end
end
