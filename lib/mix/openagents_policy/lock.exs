defmodule Mix.OpenAgentsPolicy.Lock do
  @moduledoc """
  The build's lock, so two compiles of one checkout (an editor's and a
  terminal's) install one after the other.

  A directory made atomically; its `owner` file names the OS process holding
  it, so one left by a killed compile is taken over (renamed away first, so
  that only one waiter takes it). Whether the owner lives is read from
  `/proc` where there is one, else from `kill -0`.

  Owns only the lock: what is done under it is the compiler's.
  """

  @wait 600_000

  @doc "Runs `fun` holding the lock directory `lock`; raises after 10 minutes of waiting."
  @spec with_lock(Path.t(), (... -> result)) :: result when result: term()
  def with_lock(lock, fun) do
    File.mkdir_p!(Path.dirname(lock))
    acquire(lock, System.monotonic_time(:millisecond) + @wait, false)

    try do
      fun.()
    after
      File.rm_rf(lock)
    end
  end

  defp acquire(lock, deadline, told?) do
    case File.mkdir(lock) do
      :ok ->
        File.write!(Path.join(lock, "owner"), System.pid())

      {:error, :eexist} ->
        owner = File.read(Path.join(lock, "owner"))

        cond do
          match?({:ok, _}, owner) and not alive?(elem(owner, 1)) ->
            stale = "#{lock}.stale-#{System.pid()}"
            if File.rename(lock, stale) == :ok, do: File.rm_rf(stale)
            acquire(lock, deadline, told?)

          System.monotonic_time(:millisecond) > deadline ->
            Mix.raise(
              "another compile has held #{lock} for #{div(@wait, 1000)} s; " <>
                "if no compile is running, delete that directory"
            )

          true ->
            unless told?,
              do: Mix.shell().info("Waiting for another compile of the NIF (#{lock})")

            Process.sleep(100)
            acquire(lock, deadline, true)
        end

      {:error, reason} ->
        Mix.raise("cannot create the lock #{lock}: #{:file.format_error(reason)}")
    end
  end

  defp alive?(pid) do
    pid = String.trim(pid)

    cond do
      pid == "" -> true
      File.dir?("/proc/self") -> File.exists?("/proc/#{pid}")
      true -> match?({_, 0}, System.cmd("kill", ["-0", pid], stderr_to_stdout: true))
    end
  end
end
