defmodule OpenAgentsPolicy.LockTest do
  # The build lock (Mix.OpenAgentsPolicy.Lock, lock.exs, loaded by mix.exs
  # into this VM), called directly: its takeover of a stale lock, and who
  # counts as gone. Waiters are processes of this VM; each holds the lock
  # under a token of its own, as compiles in separate VMs do.
  use ExUnit.Case, async: true

  alias Mix.OpenAgentsPolicy.Lock

  @moduletag timeout: 300_000

  setup do
    dir = Path.join(System.tmp_dir!(), "lock_test-#{System.unique_integer([:positive])}")
    File.mkdir_p!(dir)
    on_exit(fn -> File.rm_rf!(dir) end)
    %{lock: Path.join(dir, "nif.lock")}
  end

  # The owner file of a compile in this VM's kernel and PID namespace, with
  # the fields given replaced.
  defp plant!(lock, fields) do
    owner =
      %{
        "pid" => dead_pid(),
        "boot" => String.trim(File.read!("/proc/sys/kernel/random/boot_id")),
        "host" => elem(:inet.gethostname(), 1),
        "pidns" => own_pidns(),
        "start" => "0",
        "token" => "planted-#{System.unique_integer([:positive])}"
      }
      |> Map.merge(fields)

    File.mkdir_p!(lock)
    text = Enum.map_join(owner, "", fn {key, value} -> "#{key}=#{value}\n" end)
    File.write!(Path.join(lock, "owner"), text)
    text
  end

  # An OS process id that was just used, and is not any more.
  defp dead_pid do
    {pid, 0} = System.cmd("sh", ["-c", "echo $$"])
    pid = String.trim(pid)
    refute File.exists?("/proc/#{pid}")
    pid
  end

  defp own_pidns, do: File.read_link!("/proc/self/ns/pid")

  # Runs `count` waiters on `lock` at once, each holding it for a moment;
  # the most that held it at the same time.
  defp most_at_once(lock, count, opts) do
    holders = :counters.new(2, [:atomics])

    1..count
    |> Enum.map(fn _ ->
      Task.async(fn ->
        Lock.with_lock(
          lock,
          fn ->
            :counters.add(holders, 1, 1)
            now = :counters.get(holders, 1)
            if now > :counters.get(holders, 2), do: :counters.put(holders, 2, now)
            Process.sleep(20)
            :counters.sub(holders, 1, 1)
          end,
          opts
        )
      end)
    end)
    |> Task.await_many(120_000)

    :counters.get(holders, 2)
  end

  test "waiters at a stale lock take it over one at a time", %{lock: lock} do
    # The window between inspecting the stale owner and taking the lock,
    # widened as a loaded machine widens it.
    opts = [before_takeover: fn -> Process.sleep(:rand.uniform(300)) end]

    for round <- 1..5 do
      plant!(lock, %{})
      assert most_at_once(lock, 4, opts) == 1, "round #{round}: two waiters held the lock"
      refute File.exists?(lock)
    end

    # No round left anything beside the lock.
    assert File.ls!(Path.dirname(lock)) == []
  end

  test "a compile in another PID namespace is waited for while it beats, then taken over",
       %{lock: lock} do
    # Its pid is dead in this namespace: only its heartbeat says it lives.
    planted = plant!(lock, %{"pidns" => "pid:[1]"})
    owner = Path.join(lock, "owner")
    beat = spawn_link(fn -> beat(owner) end)

    waiter = Task.async(fn -> Lock.with_lock(lock, fn -> :held end, stale_after: 3_000) end)
    refute Task.yield(waiter, 8_000), "a beating owner was taken over"
    assert File.read!(owner) == planted

    # It stops beating (it was killed): taken over once 3 s pass unchanged.
    Process.unlink(beat)
    Process.exit(beat, :kill)
    assert Task.await(waiter, 60_000) == :held
    refute File.exists?(lock)
  end

  defp beat(owner) do
    :file.change_time(String.to_charlist(owner), :calendar.local_time())
    Process.sleep(200)
    beat(owner)
  end

  test "a live compile in this namespace is never taken over, however still its heartbeat",
       %{lock: lock} do
    # This VM's own pid and start time: alive. Its owner file never changes.
    start = File.read!("/proc/self/stat") |> String.split(") ") |> List.last() |> String.split()

    plant!(lock, %{
      "pid" => System.pid(),
      "start" => Enum.at(start, 19)
    })

    error =
      assert_raise Mix.Error, fn ->
        Lock.with_lock(lock, fn -> :held end, stale_after: 500, wait: 4_000)
      end

    assert error.message =~ "another compile has held #{lock}"
    assert File.exists?(Path.join(lock, "owner"))
  end

  test "a dead compile's lock in this namespace is taken over at once, its pid reused or not",
       %{lock: lock} do
    for pid <- [dead_pid(), System.pid()] do
      # start=0: no process started at boot's first tick runs here, so a
      # live pid with it is another process that reused the number.
      plant!(lock, %{"pid" => pid, "start" => "0"})
      assert Lock.with_lock(lock, fn -> :held end, stale_after: 600_000, wait: 60_000) == :held
      refute File.exists?(lock)
    end
  end

  test "a holder taken over by another leaves the other's lock in place", %{lock: lock} do
    Lock.with_lock(lock, fn ->
      # Another waiter judged this holder gone and took the lock over.
      File.write!(Path.join(lock, "owner"), "pid=1\ntoken=theirs\n")
    end)

    assert File.read!(Path.join(lock, "owner")) == "pid=1\ntoken=theirs\n"
  end
end
