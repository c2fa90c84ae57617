defmodule Mix.OpenAgentsPolicy.Lock do
  @moduledoc """
  The build's lock, so two compiles of one checkout (an editor's and a
  terminal's) install one after the other.

  The lock is a directory holding an `owner` file. A compile writes its
  owner file into a directory of its own (`<lock>.new-<token>`) and renames
  that directory to the lock: the rename succeeds only while there is no
  lock, so exactly one compile holds it, and no lock is made without its
  owner file. The holder renames the lock away when it is done.

  The owner file says who holds it, one `key=value` a line: `pid`; `boot`,
  the kernel's boot id (`/proc/sys/kernel/random/boot_id`, empty where
  there is none); `host`, the host name; `pidns`, the PID namespace
  (`/proc/self/ns/pid`); `start`, the process's start time (`/proc/<pid>/stat`,
  else `ps -o lstart=`); `token`, random bytes, so no two owner files are
  alike. While it holds the lock, the holder touches its owner file every
  5 s: a heartbeat.

  A waiter takes the lock over only from an owner that is gone:

    * an owner of this kernel and PID namespace (same `boot`, `host` and
      `pidns`) is gone when no process has its pid and start time (a reused
      pid has another start time), and is never gone while it has: a
      suspended compile (Ctrl-Z) is waited for, until the wait of 10
      minutes runs out;
    * any other owner (another PID namespace sharing `_build` through a
      container's mount, another machine sharing it over a network file
      system, or a lock written by an earlier version of this module: a bare
      pid), whose process cannot be seen from here, is gone once its owner
      file has not changed, content or heartbeat, for 60 s of this waiter's
      watching (its own clock: no clocks are compared).

  The takeover re-checks what it takes. The waiter renames the `owner` file
  to a name of its own inside the lock (a rename only one waiter can win),
  then reads it: when it is the very file it judged gone (same content,
  same modification time: no heartbeat since), it moves its own owner file
  in beside it and holds the lock; otherwise (the lock was released and
  taken again meanwhile) it puts the file back and waits on. So two waiters
  never both hold the lock, and the holder's lock directory is never
  removed by anyone but its holder. A holder whose lock was taken over
  (judged gone, wrongly) leaves the taker's lock in place when it is done.

  Owns only the lock: what is done under it is the compiler's. Absent: any
  cleaning of the `<lock>.new-*` directory of a compile killed before it
  took the lock (a few bytes in `_build`), and any takeover of a lock whose
  owner file a killed waiter was holding at that instant (the timeout's
  message says to delete the directory).
  """

  alias Mix.OpenAgentsPolicy.Cache

  @wait 600_000
  @stale_after 60_000
  @beat 5_000

  @typedoc """
  For tests: `:wait`, milliseconds before giving up (10 minutes);
  `:stale_after`, milliseconds an owner that cannot be seen must stay
  unchanged (60 s); `:before_takeover`, a function run between judging an
  owner gone and taking its lock (to widen that window).
  """
  @type option ::
          {:wait, pos_integer()}
          | {:stale_after, pos_integer()}
          | {:before_takeover, (... -> term())}

  @doc "Runs `fun` holding the lock directory `lock`; raises after 10 minutes of waiting."
  @spec with_lock(Path.t(), (... -> result), [option()]) :: result when result: term()
  def with_lock(lock, fun, opts \\ []) do
    File.mkdir_p!(Path.dirname(lock))
    me = identity()
    text = Enum.map_join(me, "", fn {key, value} -> "#{key}=#{value}\n" end)
    ready = "#{lock}.new-#{me["token"]}"
    File.mkdir!(ready)
    File.write!(Path.join(ready, "owner"), text)

    wait = Keyword.get(opts, :wait, @wait)

    waiting = %{
      me: me,
      wait: wait,
      deadline: now() + wait,
      stale_after: Keyword.get(opts, :stale_after, @stale_after),
      before_takeover: Keyword.get(opts, :before_takeover, fn -> :ok end),
      seen: nil,
      told?: false
    }

    try do
      acquire(lock, ready, waiting)
    after
      File.rm_rf(ready)
    end

    owner = Path.join(lock, "owner")
    beat = spawn_link(fn -> beat(String.to_charlist(owner)) end)

    try do
      fun.()
    after
      Process.unlink(beat)
      Process.exit(beat, :kill)
      release(lock, text, me["token"])
    end
  end

  defp now, do: System.monotonic_time(:millisecond)

  defp acquire(lock, ready, waiting) do
    case File.rename(ready, lock) do
      :ok ->
        :ok

      {:error, reason} when reason in [:eexist, :enotempty] ->
        seen = observe(Path.join(lock, "owner"), waiting.seen)

        cond do
          seen != nil and gone?(seen, waiting) and take_over(lock, ready, seen, waiting) ->
            :ok

          now() > waiting.deadline ->
            Mix.raise(
              "another compile has held #{lock} for #{div(waiting.wait, 1000)} s; " <>
                "if no compile is running, delete that directory"
            )

          true ->
            unless waiting.told?,
              do: Mix.shell().info("Waiting for another compile of the NIF (#{lock})")

            Process.sleep(100)
            acquire(lock, ready, %{waiting | seen: seen, told?: true})
        end

      {:error, reason} ->
        Mix.raise("cannot create the lock #{lock}: #{:file.format_error(reason)}")
    end
  end

  # The owner file's content and modification time, and since when this
  # waiter has seen both unchanged; nil while there is none to read.
  defp observe(owner, previous) do
    with {:ok, text} <- File.read(owner),
         {:ok, %File.Stat{mtime: mtime}} <- File.stat(owner, time: :posix) do
      case previous do
        {^text, ^mtime, since} -> {text, mtime, since}
        _ -> {text, mtime, now()}
      end
    else
      _ -> nil
    end
  end

  defp gone?({text, _mtime, since}, waiting) do
    owner = parse(text)
    me = waiting.me

    same_kernel? =
      Enum.all?(~w(boot host pidns), &(owner[&1] == me[&1])) and owner["pid"] =~ ~r/^\d+$/

    case same_kernel? && start_time(owner["pid"]) do
      nil -> true
      start when is_binary(start) -> owner["start"] not in ["", start]
      _unseen -> now() - since >= waiting.stale_after
    end
  end

  defp parse(text) do
    for line <- String.split(text, "\n"),
        [key, value] <- [String.split(line, "=", parts: 2)],
        into: %{},
        do: {key, value}
  end

  # Claims the owner file judged gone, under a name only this waiter uses;
  # holds the lock if it is that very file, else puts it back.
  defp take_over(lock, ready, {text, mtime, _since}, waiting) do
    waiting.before_takeover.()
    owner = Path.join(lock, "owner")
    claimed = Path.join(lock, "owner.taken-#{waiting.me["token"]}")

    with :ok <- File.rename(owner, claimed),
         {{:ok, ^text}, {:ok, %File.Stat{mtime: ^mtime}}} <-
           {File.read(claimed), File.stat(claimed, time: :posix)} do
      File.rename!(Path.join(ready, "owner"), owner)
      File.rm(claimed)

      gone = parse(text)

      Mix.shell().info(
        "Took over the lock #{lock} from a compile that is gone " <>
          "(pid #{gone["pid"]} on #{gone["host"] || "an unknown host"})"
      )

      true
    else
      {:error, _} ->
        false

      _other ->
        File.rename(claimed, owner)
        false
    end
  end

  defp release(lock, text, token) do
    case read_owner(Path.join(lock, "owner"), 50) do
      {:ok, other} when other != text ->
        Mix.shell().info("The lock #{lock} was taken over by another compile; left in place")

      _mine_or_none ->
        done = "#{lock}.done-#{token}"
        if File.rename(lock, done) == :ok, do: File.rm_rf(done)
    end
  end

  # A waiter may hold the owner file for a moment (take_over/4 puts back a
  # file that is not the one it judged gone).
  defp read_owner(owner, tries) do
    case File.read(owner) do
      {:error, :enoent} when tries > 0 ->
        Process.sleep(10)
        read_owner(owner, tries - 1)

      result ->
        result
    end
  end

  defp beat(owner) do
    Process.sleep(@beat)
    # Never creates the file (File.touch/1 would, while a waiter holds it).
    :file.change_time(owner, :calendar.local_time())
    beat(owner)
  end

  defp identity do
    pid = System.pid()
    {:ok, host} = :inet.gethostname()

    %{
      "pid" => pid,
      "boot" => read_trimmed("/proc/sys/kernel/random/boot_id"),
      "host" => List.to_string(host),
      "pidns" =>
        case File.read_link("/proc/self/ns/pid") do
          {:ok, ns} -> ns
          {:error, _} -> ""
        end,
      "start" =>
        case start_time(pid) do
          start when is_binary(start) -> start
          _unknown -> ""
        end,
      "token" => Cache.token()
    }
  end

  defp read_trimmed(path) do
    case File.read(path) do
      {:ok, text} -> String.trim(text)
      {:error, _} -> ""
    end
  end

  # When the process `pid` started, as text: `/proc/<pid>/stat`'s 22nd field
  # (clock ticks since boot) where there is `/proc`, else `ps -o lstart=`;
  # nil when no process has that pid, :unknown when that cannot be told.
  defp start_time(pid) do
    if File.dir?("/proc/self") do
      case File.read("/proc/#{pid}/stat") do
        # The command name (field 2, in parentheses) may hold spaces.
        {:ok, stat} -> stat |> String.split(") ") |> List.last() |> String.split() |> Enum.at(19)
        {:error, _} -> nil
      end
    else
      case System.cmd("ps", ["-o", "lstart=", "-p", pid], stderr_to_stdout: true) do
        {out, 0} -> String.trim(out)
        {_out, 1} -> nil
        _ -> :unknown
      end
    end
  rescue
    _ in ErlangError -> :unknown
  end
end
