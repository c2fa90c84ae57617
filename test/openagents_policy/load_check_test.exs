defmodule OpenAgentsPolicy.LoadCheckTest do
  # The check VM's deadline, its kill and its clean start, which the build
  # and upgrade tests do not reach: they load libraries that finish (or
  # crash) quickly.
  use ExUnit.Case, async: false

  alias OpenAgentsPolicy.LoadCheck

  # A directory of each test's own, outside the checkout.
  setup do
    dir = Path.join(System.tmp_dir!(), "load_check_test-#{System.unique_integer([:positive])}")
    File.mkdir_p!(dir)
    on_exit(fn -> File.rm_rf!(dir) end)
    %{tmp_dir: dir}
  end

  # An Erlang module whose on_load runs `body`, compiled into `dir` (never
  # loaded here: its on_load is for the check VM).
  defp module_in!(dir, name, body) do
    source = Path.join(dir, "#{name}.erl")

    File.write!(source, """
    -module(#{name}).
    -on_load(go/0).
    -export([go/0]).
    go() -> #{body}.
    """)

    {:ok, ^name, beam} = :compile.file(String.to_charlist(source), [:binary, :return_errors])
    File.write!(Path.join(dir, "#{name}.beam"), beam)
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
    refute File.exists?("/proc/#{os_pid}"), "the check VM #{os_pid} was left running"
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
    # Another user of the machine plants directories under the names the
    # next checks of this VM would take, each with a .erlang that leaves a
    # mark: a check VM whose HOME were one would run it.
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
end
