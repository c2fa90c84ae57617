defmodule HostApp.Presence do
  @moduledoc """
  Which computers are online now: live state, not a column. A computer's
  agent connection would `connect/1` and `disconnect/1`; the inventory asks
  `online?/1`. The set lives in a public ETS table owned by this process, so
  reads never wait on it, and it empties when the VM restarts (nothing is
  online until it says so again).
  """
  use GenServer

  @table __MODULE__

  @doc false
  @spec start_link(keyword()) :: GenServer.on_start()
  def start_link(opts), do: GenServer.start_link(__MODULE__, opts, name: __MODULE__)

  @doc "Whether the machine with this id is connected now."
  @spec online?(String.t()) :: boolean()
  def online?(machine_id), do: :ets.member(@table, machine_id)

  @doc "Marks the machine online."
  @spec connect(String.t()) :: :ok
  def connect(machine_id), do: GenServer.call(__MODULE__, {:put, machine_id})

  @doc "Marks the machine offline."
  @spec disconnect(String.t()) :: :ok
  def disconnect(machine_id), do: GenServer.call(__MODULE__, {:delete, machine_id})

  @impl true
  def init(_opts) do
    :ets.new(@table, [:set, :named_table, :public, read_concurrency: true])
    {:ok, nil}
  end

  @impl true
  def handle_call({:put, id}, _from, state) do
    :ets.insert(@table, {id})
    {:reply, :ok, state}
  end

  def handle_call({:delete, id}, _from, state) do
    :ets.delete(@table, id)
    {:reply, :ok, state}
  end
end
