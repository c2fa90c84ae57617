defmodule HostApp.Upgrade.Gate do
  @moduledoc """
  The process that holds HostApp.Upgrade's gate (see there): which process
  closed it, which requests are inside (deciding their answers: a request
  leaves as its response is sent, before Bandit writes a byte), which are
  held at the door, and for how long at most (`held_ms`, 5 s: an install's
  length with room, a third of the 15 s drain; see "hold" there). Every
  one of them is monitored, so a process that dies (a request Bandit kills
  when its client hangs up, an installer killed mid-install) leaves the
  gate as it dies: a request leaves the count, a held request leaves the
  queue, and an installer's death reopens the door (once `release_handler`
  has finished whatever call that installer made, so no request runs while
  an install it started is still swapping the applications' data).

  Supervised (HostApp.Application starts it before the endpoint): if this
  process itself dies, its supervisor starts a new one with the door open;
  a held request that sees it go enters the new one.

  A module of its own, so a relup that reloads HostApp.Upgrade (whose code
  installers and requests run) never purges the code this process runs.
  """
  use GenServer
  require Logger

  @defaults [max_held: 1_000, held_ms: 5_000]

  @doc false
  def start_link(opts), do: GenServer.start_link(__MODULE__, opts, name: __MODULE__)

  @impl true
  def init(opts) do
    opts = Keyword.merge(@defaults, opts)

    {:ok,
     %{
       closed_by: nil,
       inside: %{},
       held: %{},
       drain: nil,
       max_held: opts[:max_held],
       held_ms: opts[:held_ms]
     }}
  end

  @impl true
  def handle_call({:enter, pid}, _from, state) do
    case state.inside do
      # Already inside (a nested serve): never held behind itself.
      %{^pid => {ref, depth}} ->
        {:reply, :ok, put_in(state.inside[pid], {ref, depth + 1})}

      _ when state.closed_by == nil ->
        {:reply, :ok, put_in(state.inside[pid], {Process.monitor(pid), 1})}

      _ when map_size(state.held) >= state.max_held ->
        {:reply, :full, state}

      _ ->
        ref = Process.monitor(pid)
        {:reply, {:held, ref, state.held_ms}, put_in(state.held[ref], pid)}
    end
  end

  def handle_call({:close, _pid, _drain_ms}, _from, %{closed_by: {_, _}} = state),
    do: {:reply, {:error, :install_in_progress}, state}

  def handle_call({:close, pid, drain_ms}, from, state) do
    state = %{state | closed_by: {pid, Process.monitor(pid)}}

    if state.inside == %{} do
      {:reply, :ok, state}
    else
      tag = make_ref()
      timer = Process.send_after(self(), {:drain_deadline, tag}, drain_ms)
      {:noreply, %{state | drain: {from, tag, timer}}}
    end
  end

  def handle_call({:open, pid}, _from, %{closed_by: {pid, _}} = state),
    do: {:reply, :ok, open(state)}

  def handle_call({:open, _pid}, _from, state), do: {:reply, :not_holder, state}

  def handle_call(:reopen, _from, %{closed_by: nil} = state), do: {:reply, :already_open, state}

  def handle_call(:reopen, _from, %{closed_by: {pid, _}} = state) do
    Logger.warning("HostApp.Upgrade: the gate closed by #{inspect(pid)} was reopened by hand")
    {:reply, :reopened, open(state)}
  end

  def handle_call(:state, _from, state) do
    inside = state.inside |> Map.values() |> Enum.map(&elem(&1, 1)) |> Enum.sum()
    {:reply, %{closed: state.closed_by != nil, inside: inside, held: map_size(state.held)}, state}
  end

  def handle_call({:configure, opts}, _from, state) do
    previous = [max_held: state.max_held, held_ms: state.held_ms]
    opts = Keyword.merge(previous, opts)
    {:reply, previous, %{state | max_held: opts[:max_held], held_ms: opts[:held_ms]}}
  end

  @impl true
  def handle_cast({:leave, pid}, state) do
    case state.inside do
      %{^pid => {ref, 1}} ->
        Process.demonitor(ref, [:flush])
        drained(%{state | inside: Map.delete(state.inside, pid)})

      %{^pid => {ref, depth}} ->
        {:noreply, put_in(state.inside[pid], {ref, depth - 1})}

      # A request that entered a gate process since restarted.
      _ ->
        {:noreply, state}
    end
  end

  # A request whose entry it stopped waiting for (HostApp.Upgrade's
  # enter_ms): sent after that entry, so read after it; the hold it made
  # dropped, or the level it counted left.
  def handle_cast({:forget, pid}, state) do
    case Enum.find(state.held, fn {_ref, held} -> held == pid end) do
      {ref, _pid} -> handle_cast({:give_up, ref}, state)
      nil -> handle_cast({:leave, pid}, state)
    end
  end

  def handle_cast({:give_up, ref}, state) do
    Process.demonitor(ref, [:flush])
    {:noreply, %{state | held: Map.delete(state.held, ref)}}
  end

  @impl true
  def handle_info({:drain_deadline, tag}, %{drain: {from, tag, _}} = state) do
    inside = state.inside |> Map.values() |> Enum.map(&elem(&1, 1)) |> Enum.sum()
    GenServer.reply(from, {:error, {:requests_still_running, inside}})
    {:noreply, open(%{state | drain: nil})}
  end

  def handle_info({:drain_deadline, _stale}, state), do: {:noreply, state}

  # The installer died. Its install may still be running inside
  # release_handler (a call outlives its caller): the door opens once
  # release_handler answers a system message, i.e. has finished that call
  # (at most 60 s; at once where there is no release_handler).
  def handle_info({:DOWN, ref, :process, pid, why}, %{closed_by: {pid, ref}} = state) do
    Logger.warning(
      "HostApp.Upgrade: the installer #{inspect(pid)} holding the gate died (#{inspect(why)}); " <>
        "reopening it once release_handler is idle"
    )

    gate = self()

    spawn(fn ->
      _ =
        try do
          :sys.get_state(:release_handler, 60_000)
        catch
          :exit, _ -> :none
        end

      send(gate, {:installer_gone, pid})
    end)

    state =
      case state.drain do
        {from, _tag, timer} ->
          Process.cancel_timer(timer)
          GenServer.reply(from, {:error, :installer_died})
          %{state | drain: nil}

        nil ->
          state
      end

    {:noreply, %{state | closed_by: {pid, :dead}}}
  end

  def handle_info({:DOWN, ref, :process, pid, _why}, state) do
    case state.inside do
      %{^pid => {^ref, _}} ->
        drained(%{state | inside: Map.delete(state.inside, pid)})

      _ ->
        {:noreply, %{state | held: Map.delete(state.held, ref)}}
    end
  end

  def handle_info({:installer_gone, pid}, %{closed_by: {pid, :dead}} = state),
    do: {:noreply, open(state)}

  def handle_info({:installer_gone, _pid}, state), do: {:noreply, state}

  # The drain is over when the last request inside leaves.
  defp drained(%{drain: {from, _tag, timer}, inside: inside} = state) when inside == %{} do
    Process.cancel_timer(timer)
    GenServer.reply(from, :ok)
    {:noreply, %{state | drain: nil}}
  end

  defp drained(state), do: {:noreply, state}

  # Every held request told to enter again, the installer forgotten.
  defp open(state) do
    for {ref, pid} <- state.held do
      Process.demonitor(ref, [:flush])
      send(pid, {:open, ref})
    end

    case state.closed_by do
      {_pid, ref} when is_reference(ref) -> Process.demonitor(ref, [:flush])
      _ -> :ok
    end

    %{state | closed_by: nil, held: %{}}
  end
end
