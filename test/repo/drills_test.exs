defmodule OpenAgentsPolicy.DrillsTest do
  # The example host's drills leave nothing behind however they end: the
  # fault runs (examples/drills/faults/run.sh, whose cleanup is every
  # drill's: examples/drills/lib/drill.sh), failed on purpose or stopped by
  # TERM right after starting a PostgreSQL server of their own, stop it, kill
  # what they started and remove their work directory; a port already taken
  # is refused naming what holds it. No release is built: each ends before.
  use ExUnit.Case, async: true
  @moduletag :repo

  @run Path.expand("../../examples/drills/faults/run.sh", __DIR__)

  setup do
    # Readable by the `postgres` user, which runs the server as root's drills do.
    tmp = Path.join(System.tmp_dir!(), "drills-#{System.unique_integer([:positive])}")
    File.mkdir_p!(tmp)
    on_exit(fn -> File.rm_rf!(tmp) end)
    {:ok, tmp: tmp, pg_port: free_port(), port: free_port()}
  end

  defp free_port do
    {:ok, socket} = :gen_tcp.listen(0, ip: {127, 0, 0, 1})
    {:ok, port} = :inet.port(socket)
    :ok = :gen_tcp.close(socket)
    port
  end

  defp env(ctx, extra) do
    [
      {"TMPDIR", ctx.tmp},
      {"FAULTS_PG_PORT", "#{ctx.pg_port}"},
      {"FAULTS_PG_DIR", Path.join(ctx.tmp, "pg")},
      {"FAULTS_PORT", "#{ctx.port}"}
      | extra
    ]
  end

  # The drill's work directories under TMPDIR (the server's data directory, pg, aside).
  defp work_dirs(ctx), do: Path.wildcard(Path.join(ctx.tmp, "faults.*"))

  defp listening?(port), do: match?({:ok, _}, :gen_tcp.connect(~c"127.0.0.1", port, [], 1_000))

  defp left_behind(ctx) do
    {processes, _} = System.cmd("pgrep", ["-f", ctx.tmp])
    {work_dirs(ctx), listening?(ctx.pg_port), String.split(processes)}
  end

  test "a fault run that fails after starting its PostgreSQL leaves nothing behind", ctx do
    {out, status} =
      System.cmd(@run, ["dbdown"],
        env: env(ctx, [{"DRILL_FAIL_AT", "postgres"}]),
        stderr_to_stdout: true
      )

    assert status == 1, out
    assert out =~ "DRILL_FAIL_AT=postgres, on purpose"
    assert out =~ "stopped #{Path.join(ctx.tmp, "pg")}"
    assert left_behind(ctx) == {[], false, []}
  end

  test "a fault run stopped by TERM leaves nothing behind", ctx do
    env =
      for {key, value} <- env(ctx, [{"DRILL_WAIT_AT", "postgres"}]),
          do: {~c"#{key}", ~c"#{value}"}

    port = Port.open({:spawn_executable, @run}, [:exit_status, args: ["dbdown"], env: env])

    # Running: its server listens and its work directory says it waits.
    wait_until(fn -> Enum.any?(work_dirs(ctx), &File.exists?(Path.join(&1, "waiting"))) end)
    assert listening?(ctx.pg_port)
    {:os_pid, pid} = Port.info(port, :os_pid)
    {_, 0} = System.cmd("kill", ["-TERM", "#{pid}"])
    assert_receive {^port, {:exit_status, 143}}, 60_000
    assert left_behind(ctx) == {[], false, []}
  end

  test "a port already taken is refused, naming what holds it", ctx do
    {:ok, socket} = :gen_tcp.listen(ctx.port, ip: {127, 0, 0, 1})
    {out, status} = System.cmd(@run, ["dbdown"], env: env(ctx, []), stderr_to_stdout: true)
    :gen_tcp.close(socket)
    assert status == 1, out

    assert out =~
             ~r/port #{ctx.port} is taken \(.*beam\.smp.*pid=#{System.pid()}.*\); set FAULTS_PORT/

    assert left_behind(ctx) == {[], false, []}
  end

  defp wait_until(fun) do
    Enum.find_value(1..600, fn _ -> fun.() || (Process.sleep(100) && nil) end) ||
      flunk("the drill did not reach its waiting point")
  end
end
