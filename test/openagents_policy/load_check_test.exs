defmodule OpenAgentsPolicy.LoadCheckTest do
  # The check VM's deadline, its kill, its clean start and its death with
  # its caller, which the build and upgrade tests do not reach: they load
  # libraries that finish (or crash) quickly. And `module/3`'s `ask:`, the
  # one call after the load, answering and refusing.
  use ExUnit.Case, async: false

  import Bitwise

  alias OpenAgentsPolicy.LoadCheck

  # A directory of each test's own, outside the checkout.
  setup do
    dir = Path.join(System.tmp_dir!(), "load_check_test-#{System.unique_integer([:positive])}")
    File.mkdir_p!(dir)
    on_exit(fn -> File.rm_rf!(dir) end)
    %{tmp_dir: dir}
  end

  # An Erlang module whose on_load runs `body`, compiled into `dir` (never
  # loaded here: its on_load is for the check VM), and `functions` (name:
  # body), each of arity 0 and exported.
  defp module_in!(dir, name, body, functions \\ []) do
    source = Path.join(dir, "#{name}.erl")
    exports = Enum.map_join(functions, "", fn {f, _} -> ", #{f}/0" end)

    File.write!(source, """
    -module(#{name}).
    -on_load(go/0).
    -export([go/0#{exports}]).
    go() -> #{body}.
    #{Enum.map_join(functions, "\n", fn {f, b} -> "#{f}() -> #{b}." end)}
    """)

    {:ok, ^name, beam} = :compile.file(String.to_charlist(source), [:binary, :return_errors])
    File.write!(Path.join(dir, "#{name}.beam"), beam)
  end

  # A module whose on_load never returns, after writing where the test
  # reads them the check VM's HOME, then its OS pid (so the pid file's
  # presence says both are there); then the check VM's pid and home, each
  # killed or removed at the test's exit if the check left them.
  defp hanging_check!(dir) do
    pid_file = Path.join(dir, "pid")

    module_in!(dir, :load_check_hang, """
    ok = file:write_file(#{inspect(Path.join(dir, "home"))}, os:getenv("HOME")),
      ok = file:write_file(#{inspect(pid_file)}, os:getpid()),
      timer:sleep(infinity)
    """)

    fn -> started!(dir) end
  end

  # A NIF library whose ELF constructor, run by dlopen(3) inside the
  # loader, before any NIF entry point is looked for, runs `body` (C); built
  # with the C compiler cargo links with.
  defp c_library!(dir, name, body) do
    source = Path.join(dir, "#{name}.c")
    file = Path.join(dir, "#{name}.so")

    File.write!(source, """
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>
    #include <unistd.h>
    __attribute__((constructor)) static void construct(void) { #{body} }
    """)

    {output, status} =
      System.cmd("cc", ["-shared", "-fPIC", "-o", file, source], stderr_to_stdout: true)

    assert status == 0, "cc failed: #{output}"
    file
  end

  # A library whose constructor never returns, in native code (no process
  # of its VM is in the way: it sleeps in the loader), after writing the
  # check VM's HOME and OS pid as hanging_check!/1's module does.
  defp hanging_library!(dir) do
    file =
      c_library!(dir, "hang", """
      FILE *f = fopen(#{inspect(Path.join(dir, "home"))}, "w");
        fputs(getenv("HOME"), f); fclose(f);
        f = fopen(#{inspect(Path.join(dir, "pid.new"))}, "w");
        fprintf(f, "%d", getpid()); fclose(f);
        rename(#{inspect(Path.join(dir, "pid.new"))}, #{inspect(Path.join(dir, "pid"))});
        for (;;) sleep(1);
      """)

    {file, fn -> started!(dir) end}
  end

  # The check VM's OS pid and HOME, once the pid file says both are written;
  # each killed or removed at the test's exit if the check left them.
  defp started!(dir) do
    pid_file = Path.join(dir, "pid")
    assert poll(fn -> File.exists?(pid_file) end, 60_000), "the check VM never started its load"
    os_pid = File.read!(pid_file)
    home = File.read!(Path.join(dir, "home"))

    on_exit(fn ->
      kill_if_ours(os_pid, dir)
      File.rm_rf!(home)
    end)

    {os_pid, home}
  end

  # A VM of this installation calling `eval` (Erlang) with this build's
  # ebin and Elixir's on its code path, under umask 000 (where a directory
  # made 0777 and chmod'ed after would be anyone's for a moment), as the
  # port's OS process; killed at the test's exit if still there.
  defp caller_vm!(dir, eval) do
    erl = Path.join([:code.root_dir(), "bin", "erl"])

    ebins =
      for app <- [:elixir, :openagents_policy], do: ["-pa", Path.join(:code.lib_dir(app), "ebin")]

    caller =
      Port.open({:spawn_executable, "/bin/sh"}, [
        :binary,
        :exit_status,
        :stderr_to_stdout,
        args:
          ["-c", ~s(umask 000 && exec "$0" "$@"), erl, "-noshell"] ++
            List.flatten(ebins) ++ ["-eval", eval]
      ])

    {:os_pid, caller_pid} = Port.info(caller, :os_pid)
    on_exit(fn -> kill_if_ours(caller_pid, dir) end)
    {caller, caller_pid}
  end

  # The VM's resident set, in bytes (Linux's /proc, as the tests above).
  defp rss do
    [_, kb] = Regex.run(~r/^VmRSS:\s+(\d+) kB/m, File.read!("/proc/self/status"))
    String.to_integer(kb) * 1024
  end

  # The largest resident set seen every 5 ms until told to stop.
  defp sample_rss(peak) do
    receive do
      {:stop, from} -> send(from, {:peak, max(peak, rss())})
    after
      5 -> sample_rss(max(peak, rss()))
    end
  end

  # SIGKILL to a VM a test left running: only while its command line names
  # the test's directory (its pid may since have gone to another process).
  defp kill_if_ours(os_pid, dir) do
    case File.read("/proc/#{os_pid}/cmdline") do
      {:ok, cmdline} ->
        if String.contains?(cmdline, dir) and not gone?(os_pid),
          do: System.cmd("kill", ["-KILL", "#{os_pid}"], stderr_to_stdout: true)

      {:error, _} ->
        :ok
    end
  end

  # Gone: no such process, or one that has exited and waits for its parent
  # (a check VM whose caller died is the child of whatever reaps orphans).
  defp gone?(os_pid) do
    case File.read("/proc/#{os_pid}/status") do
      {:ok, status} -> status =~ ~r/^State:\s+Z/m
      {:error, _} -> true
    end
  end

  # A check VM its caller killed (SIGKILL to the port's process group) is
  # gone within moments of the check's answer: the answer waits for the
  # end of the port's output, which the VM's death closes, and its last
  # threads end just after.
  defp killed?(os_pid), do: poll(fn -> gone?(os_pid) end, 5_000)

  # The check VM `os_pid` gone within 30 s of `what`, and its home with it.
  defp assert_gone(os_pid, home, what) do
    assert poll(fn -> gone?(os_pid) end, 30_000),
           "the check VM #{os_pid} still runs 30 s after #{what}"

    refute File.exists?(home), "the check VM's home #{home} was left behind"
  end

  # Whether `fun` turns true within `bound` ms: a bound for a slow machine,
  # not a measure.
  defp poll(fun, bound), do: poll_until(fun, System.monotonic_time(:millisecond) + bound)

  defp poll_until(fun, until) do
    cond do
      fun.() -> true
      System.monotonic_time(:millisecond) > until -> false
      true -> Process.sleep(50) && poll_until(fun, until)
    end
  end

  test "a load that prints every 200 ms is still cut off at the deadline, and its VM killed",
       %{tmp_dir: dir} do
    pid_file = Path.join(dir, "pid")

    module_in!(dir, :load_check_chatty, """
    ok = file:write_file(#{inspect(pid_file)}, os:getpid()),
      Loop = fun L() -> io:put_chars("still loading~n"), timer:sleep(200), L() end,
      Loop()
    """)

    started = System.monotonic_time(:millisecond)

    assert LoadCheck.module(:load_check_chatty, [dir], timeout: 2_000) ==
             {:error, "loading it did not finish within 2 s"}

    elapsed = System.monotonic_time(:millisecond) - started
    assert elapsed >= 2_000 and elapsed < 8_000, "took #{elapsed} ms"

    os_pid = File.read!(pid_file)
    assert killed?(os_pid), "the check VM #{os_pid} was left running"
  end

  test "the check VM runs no .erlang of the user's", %{tmp_dir: dir} do
    home = Path.join(dir, "home")
    ran = Path.join(dir, "dot_erlang_ran")
    File.mkdir_p!(home)
    File.write!(Path.join(home, ".erlang"), "file:write_file(#{inspect(ran)}, <<\"ran\">>).\n")
    module_in!(dir, :load_check_quiet, "ok")

    previous = System.get_env("HOME")
    System.put_env("HOME", home)

    try do
      assert LoadCheck.module(:load_check_quiet, [dir]) == :ok
    after
      System.put_env("HOME", previous)
    end

    refute File.exists?(ran)
  end

  test "the check VM's home is its own: a directory planted at a name it could take is never used",
       %{tmp_dir: dir} do
    # Another user of the machine plants directories under names of the
    # check's form, each with a .erlang that leaves a mark: a check VM whose
    # HOME were one would run it. (The check's names are mktemp's, random:
    # what keeps it off a planted one is that mkdir(2) never takes a name
    # already there.)
    ran = Path.join(dir, "planted_erlang_ran")
    next = System.unique_integer([:positive])

    planted =
      for n <- (next + 1)..(next + 200) do
        home = Path.join(System.tmp_dir!(), "load_check-#{n}")
        File.mkdir_p!(home)

        File.write!(
          Path.join(home, ".erlang"),
          "file:write_file(#{inspect(ran)}, <<\"ran\">>).\n"
        )

        home
      end

    on_exit(fn -> Enum.each(planted, &File.rm_rf!/1) end)
    module_in!(dir, :load_check_planted, "ok")

    assert LoadCheck.module(:load_check_planted, [dir]) == :ok
    refute File.exists?(ran)
    # Every planted directory is as it was: none was taken, or removed.
    assert Enum.all?(planted, &File.regular?(Path.join(&1, ".erlang")))
  end

  test "a library is loaded into a stub of the functions it names, not native.ex's",
       %{tmp_dir: dir} do
    stub = Path.join(dir, "stub.beam")

    assert LoadCheck.library(OpenAgentsPolicy.Native.library_file(), OpenAgentsPolicy.Native,
             keep_stub: stub
           ) == :ok

    {:ok, {_, [exports: exports]}} = :beam_lib.chunks(String.to_charlist(stub), [:exports])
    nifs = exports -- [check: 1, module_info: 0, module_info: 1]
    # Every function the library names is one Native exports (Native adds
    # Elixir functions of its own around them), and these are among them.
    assert nifs -- OpenAgentsPolicy.Native.module_info(:exports) == []
    assert [lifecycles: 0, custody: 1, fields_at_dirty: 3, project_normal: 4] -- nifs == []

    assert {:error, "bad_lib: Library module name" <> _} =
             LoadCheck.library(OpenAgentsPolicy.Native.library_file(), Elsewhere)
  end

  describe "module/3 with ask:" do
    test "answers what the loaded module's function returned, in the check VM", %{tmp_dir: dir} do
      module_in!(dir, :load_check_answers, "ok",
        answer: ~s|{os:getpid(), <<"decided"/utf8>>, [1, 2.5, ok]}|
      )

      assert {:ok, {os_pid, "decided", [1, 2.5, :ok]}} =
               LoadCheck.module(:load_check_answers, [dir], ask: :answer)

      # The check VM's own answer, not this VM's.
      assert os_pid != System.pid()
      # Not asked: as before.
      assert LoadCheck.module(:load_check_answers, [dir]) == :ok
    end

    test "answers the target library's own decision digest" do
      ebin = Application.app_dir(:openagents_policy, "ebin")

      assert LoadCheck.module(OpenAgentsPolicy.Native, [ebin], ask: :decision_digest) ==
               {:ok, OpenAgentsPolicy.decision_digest()}
    end

    test "refuses when the function raises, throws, exits or is not there", %{tmp_dir: dir} do
      module_in!(dir, :load_check_refuses, "ok",
        raises: "error(not_decided)",
        throws: "throw(not_decided)",
        exits: "exit(not_decided)"
      )

      for {function, banner} <- [
            raises: "** (ErlangError) Erlang error: :not_decided",
            throws: "** (throw) :not_decided",
            exits: "** (exit) :not_decided",
            missing:
              "** (UndefinedFunctionError) function :load_check_refuses.missing/0 is undefined or private"
          ] do
        assert LoadCheck.module(:load_check_refuses, [dir], ask: function) ==
                 {:error, ":load_check_refuses.#{function}/0, asked after the load: #{banner}"}
      end
    end

    test "a function that never returns is cut off at the check's one deadline",
         %{tmp_dir: dir} do
      pid_file = Path.join(dir, "pid")

      module_in!(dir, :load_check_ask_hangs, "ok",
        answer: ~s|ok = file:write_file(#{inspect(pid_file)}, os:getpid()), timer:sleep(infinity)|
      )

      assert LoadCheck.module(:load_check_ask_hangs, [dir], ask: :answer, timeout: 2_000) ==
               {:error,
                "loading it and calling :load_check_ask_hangs.answer/0 did not finish within 2 s"}

      os_pid = File.read!(pid_file)
      assert killed?(os_pid), "the check VM #{os_pid} was left running"
    end

    test "refuses an answer naming an atom this VM does not know, and makes none",
         %{tmp_dir: dir} do
      atom = "load_check_unknown_#{System.unique_integer([:positive])}"

      # Its name read from a file by the check VM: a literal would be made
      # here, as the compiler folds list_to_atom/1 of one.
      name = Path.join(dir, "atom")
      File.write!(name, atom)

      module_in!(dir, :load_check_new_atom, "ok",
        answer: ~s|{ok, N} = file:read_file(#{inspect(name)}), {ok, binary_to_atom(N, utf8)}|
      )

      assert {:error, "the answer of the function asked could not be read: " <> _} =
               LoadCheck.module(:load_check_new_atom, [dir], ask: :answer)

      assert_raise ArgumentError, fn -> String.to_existing_atom(atom) end
    end

    test "asks nothing of a module that did not load", %{tmp_dir: dir} do
      asked = Path.join(dir, "asked")

      module_in!(dir, :load_check_no_load, "{error, not_loaded}",
        answer: ~s|ok = file:write_file(#{inspect(asked)}, <<"asked">>)|
      )

      assert {:error, why} = LoadCheck.module(:load_check_no_load, [dir], ask: :answer)
      assert why =~ "not_loaded"
      refute File.exists?(asked)
    end
  end

  test "the check VM dies with its caller's VM, killed with SIGKILL, and removes its home",
       %{tmp_dir: dir} do
    started = hanging_check!(dir)

    # A deadline far away: nothing but the caller's death can explain the
    # check VM's.
    {caller, caller_pid} =
      caller_vm!(
        dir,
        "'Elixir.OpenAgentsPolicy.LoadCheck':module(load_check_hang, [#{inspect(dir)}], [{timeout, 600000}]), halt()."
      )

    {os_pid, home} = started.()
    # Made 0700 at once by mktemp, under the caller's umask 000: the mode of
    # the check VM's working directory, its home.
    assert (File.stat!("/proc/#{os_pid}/cwd").mode &&& 0o777) == 0o700
    {_, 0} = System.cmd("kill", ["-KILL", "#{caller_pid}"])
    assert_receive {^caller, {:exit_status, 137}}, 10_000

    assert_gone(os_pid, home, "its caller was killed")
  end

  test "a constructor that never returns, its caller's VM killed: the check VM ends at its deadline",
       %{tmp_dir: dir} do
    {file, started} = hanging_library!(dir)
    # Nothing in the check VM can halt it: its load sleeps in native code.
    # What ends it is outside that VM, and outside its dead caller.
    {caller, caller_pid} =
      caller_vm!(
        dir,
        "'Elixir.OpenAgentsPolicy.LoadCheck':library(#{inspect(file)}, load_check_hang_c, [{timeout, 3000}]), halt()."
      )

    {os_pid, home} = started.()
    {_, 0} = System.cmd("kill", ["-KILL", "#{caller_pid}"])
    killed = System.monotonic_time(:millisecond)
    assert_receive {^caller, {:exit_status, 137}}, 10_000

    # The deadline, 3 s from the call, is at most 3 s from the kill; a few
    # seconds more for the check's outer bound (whole seconds, one more
    # than the deadline) and a loaded machine.
    gone = poll(fn -> gone?(os_pid) and not File.exists?(home) end, 10_000)
    took = System.monotonic_time(:millisecond) - killed

    assert gone,
           "the check VM #{os_pid} or its home #{home} still there #{took} ms after its caller's kill"
  end

  test "a constructor that prints forever: this VM keeps 128 KiB of it and grows by less than 50 MB",
       %{tmp_dir: dir} do
    file =
      c_library!(dir, "chatty", """
      static char chunk[65536];
        memset(chunk, 'x', sizeof chunk);
        for (;;) if (write(1, chunk, sizeof chunk) < 0) _exit(1);
      """)

    before = rss()
    test = self()
    sampler = spawn_link(fn -> sample_rss(before) end)
    checked = LoadCheck.library(file, :load_check_chatty_c, timeout: 5_000)
    send(sampler, {:stop, test})
    assert_receive {:peak, peak}, 5_000

    assert {:error, "loading it did not finish within 5 s (" <> dropped} = checked

    assert [_, bytes] =
             Regex.run(
               ~r/^(\d+) bytes of the check VM's output dropped: the check keeps the first and last 64 KiB of it\)$/,
               dropped
             )

    # It printed more than this VM may grow by, or the bound proves nothing.
    assert String.to_integer(bytes) > 50_000_000, "inconclusive: it printed only #{bytes} bytes"
    assert peak - before < 50_000_000, "this VM grew by #{peak - before} bytes"
  end

  test "what a load printed is kept whole up to 128 KiB, and past that says how much was dropped",
       %{tmp_dir: dir} do
    for {name, bytes} <- [{:load_check_says_some, 100_000}, {:load_check_says_more, 300_000}] do
      module_in!(dir, name, ~s|io:put_chars(lists:duplicate(#{bytes}, $^)), {error, said}|)
      assert {:error, why} = LoadCheck.module(name, [dir])
      assert why =~ "said"
      carets = why |> String.graphemes() |> Enum.count(&(&1 == "^"))

      case Regex.run(~r/\n\[(\d+) bytes of the check VM's output dropped: /, why) do
        nil ->
          assert bytes <= 2 * 65_536 and carets == bytes

        [_, dropped] ->
          # Only the middle went: every byte printed is kept or counted.
          assert bytes > 2 * 65_536 and carets <= 2 * 65_536
          assert carets + String.to_integer(dropped) == bytes
      end
    end
  end

  test "the check VM halts when its calling process dies, and removes its home",
       %{tmp_dir: dir} do
    started = hanging_check!(dir)
    caller = spawn(fn -> LoadCheck.module(:load_check_hang, [dir], timeout: 600_000) end)
    {os_pid, home} = started.()
    # Killed: its `after`, which removes the home, never runs.
    Process.exit(caller, :kill)

    assert_gone(os_pid, home, "its calling process was killed")
  end

  test "a caller alive but stuck: the check VM still halts at its own deadline",
       %{tmp_dir: dir} do
    started = hanging_check!(dir)
    test = self()
    t0 = System.monotonic_time(:millisecond)

    caller =
      spawn(fn ->
        send(test, {:checked, LoadCheck.module(:load_check_hang, [dir], timeout: 5_000)})
      end)

    on_exit(fn -> Process.exit(caller, :kill) end)
    {os_pid, home} = started.()
    true = :erlang.suspend_process(caller)
    # Suspended before its own deadline (counted from after t0), so the
    # caller can have killed nothing: what ends the check VM is its own.
    suspended_at = System.monotonic_time(:millisecond) - t0
    assert suspended_at < 5_000, "inconclusive: the caller was suspended after #{suspended_at} ms"

    assert poll(fn -> gone?(os_pid) end, 30_000),
           "the check VM #{os_pid}, with its caller stuck, still runs 30 s into its 5 s"

    refute File.exists?(home), "the check VM's home #{home} was left behind"
    # Resumed, the caller reads the check VM's end as its own deadline's.
    true = :erlang.resume_process(caller)
    assert_receive {:checked, {:error, "loading it did not finish within 5 s"}}, 10_000
  end
end
