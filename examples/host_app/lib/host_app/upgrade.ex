defmodule HostApp.Upgrade do
  @moduledoc """
  Installs a release in place with no request running while
  `release_handler` swaps the applications' data: a request waits at the
  endpoint's door for the install to end, and the install waits for the
  requests already inside to leave.

  Why. `:release_handler.install_release/1`, before it evaluates the
  relup's first instruction (and whether or not the relup then refuses),
  replaces every application's specification and environment
  (`application_controller:change_application_data/2`): for each
  application it deletes the whole environment, then inserts the new one
  key by key. After the instructions it calls the `config_change/3` of every
  application whose environment changed. A process that reads an
  application's environment in between finds it missing, whatever both
  versions say. In this host that is every request that loads a
  `:utc_datetime` column: Ecto calls `DateTime.from_naive!/2`, which fetches
  `:elixir`'s `:time_zone_database` with `Application.fetch_env!/2` even for
  `"Etc/UTC"`, raises `ArgumentError`, and the reader gets a 500. The gap
  lasts microseconds, unless `application_controller` is scheduled out
  inside it, as it can be on a busy machine, while another scheduler serves
  requests. One run of scripts/hot_upgrade.sh in eight, on a loaded
  machine, once served a 500 while `install` ran (one request of 3643, its
  log lost); of the release's 37 applications, `:elixir` is the only one
  whose missing environment changes an answer here. No appup instruction
  can help: the swap comes before the first one.

  Words:

    * **gate**: two counters, shared by every process without a message:
      whether an install holds the door closed, and how many requests are
      inside (`serve/1`).
    * **drain**: the install closes the door, then waits until no request
      is inside (at most 15 s; past that it installs nothing and
      says so, as a refused install does).
    * **hold**: a request that finds the door closed leaves the count and
      waits, polling each millisecond, then enters again. It is answered,
      by the new version, once the install ends: late, never failed.

  `install/1` prints what `bin/host_app install` (castle's
  `Castle.install/1`) prints, so `bin/host_app rpc
  'HostApp.Upgrade.install("0.1.1")'` is that command behind the gate.

  Deliberately absent: any hold on what does not come through the endpoint
  (this host has no background work that reads configuration), and any
  timeout on a held request (the install that holds it is bounded by its own
  steps; the `after` that opens the door runs however it ends).
  """

  @key {__MODULE__, :gate}
  @closed 1
  @inside 2
  @held 3
  @drain_ms 15_000

  @doc "Makes the gate (open, empty). The application calls it once, before the endpoint starts."
  @spec setup() :: :ok
  def setup do
    unless :persistent_term.get(@key, nil),
      do: :persistent_term.put(@key, :atomics.new(3, signed: true))

    :ok
  end

  @doc """
  Runs `fun` (one request) inside the gate: counted while it runs, after
  waiting for any install holding the door.
  """
  @spec serve((... -> result)) :: result when result: var
  def serve(fun) do
    case :persistent_term.get(@key, nil) do
      # Only in a VM that took this module by a hot upgrade and has not run
      # setup/0 yet (the first install through the gate makes it).
      nil ->
        fun.()

      gate ->
        enter(gate)

        try do
          fun.()
        after
          :atomics.sub(gate, @inside, 1)
        end
    end
  end

  # Counted first, then the door checked; the install closes the door first,
  # then reads the count (atomics are sequentially consistent): a request
  # either sees the door closed or is counted before the install reads 0.
  defp enter(gate) do
    :atomics.add(gate, @inside, 1)

    if :atomics.get(gate, @closed) == 1 do
      :atomics.sub(gate, @inside, 1)
      :atomics.add(gate, @held, 1)
      wait_open(gate)
      :atomics.sub(gate, @held, 1)
      enter(gate)
    end
  end

  defp wait_open(gate) do
    if :atomics.get(gate, @closed) == 1 do
      Process.sleep(1)
      wait_open(gate)
    end
  end

  @doc """
  Runs `fun` with the door closed and no request inside; `{:error,
  {:requests_still_running, count}}` without running it when requests are
  still inside after #{@drain_ms} ms, `{:error, :install_in_progress}` when
  another install holds the door.
  """
  @spec closed((... -> result), non_neg_integer()) ::
          {:ok, result}
          | {:error, {:requests_still_running, pos_integer()} | :install_in_progress}
        when result: var
  def closed(fun, drain_ms \\ @drain_ms) do
    gate = gate()

    case :atomics.compare_exchange(gate, @closed, 0, 1) do
      :ok ->
        try do
          case drain(gate, System.monotonic_time(:millisecond) + drain_ms) do
            :ok -> {:ok, fun.()}
            {:error, _} = refused -> refused
          end
        after
          :atomics.put(gate, @closed, 0)
        end

      _closed ->
        {:error, :install_in_progress}
    end
  end

  defp drain(gate, deadline) do
    case :atomics.get(gate, @inside) do
      0 ->
        :ok

      inside ->
        if System.monotonic_time(:millisecond) >= deadline do
          {:error, {:requests_still_running, inside}}
        else
          Process.sleep(1)
          drain(gate, deadline)
        end
    end
  end

  @doc "The gate now: whether the door is closed, the requests inside and those held at it."
  @spec state() :: %{closed: boolean(), inside: non_neg_integer(), held: non_neg_integer()}
  def state do
    gate = gate()

    %{
      closed: :atomics.get(gate, @closed) == 1,
      inside: :atomics.get(gate, @inside),
      held: :atomics.get(gate, @held)
    }
  end

  @doc """
  `bin/host_app install VSN` behind the gate: castle writes the target's
  sys.config and `release_handler` installs it, with no request running.
  Prints castle's lines, or `Install of VSN failed. REASON` when the gate
  refuses.
  """
  @spec install(String.t()) :: :ok
  def install(vsn) when is_binary(vsn) do
    case closed(fn -> Castle.install(vsn) end) do
      {:ok, _printed} -> :ok
      {:error, reason} -> IO.puts("Install of #{vsn} failed. #{inspect(reason)}")
    end
  end

  defp gate do
    :ok = setup()
    :persistent_term.get(@key)
  end
end
