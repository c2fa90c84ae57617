defmodule OpenAgents.Repo do
  @moduledoc """
  Stand-in for the host's Ecto repo: an Agent holding records by
  `{schema, id}`. `insert/1` applies a valid changeset, fills `id` and
  `inserted_at` when they are nil, stores the record and returns
  `{:ok, record}`; an invalid changeset comes back as `{:error, changeset}`.
  """
  use Agent

  alias HostApp.Changeset

  def start_link(_opts), do: Agent.start_link(fn -> %{} end, name: __MODULE__)

  @spec insert(Changeset.t() | struct()) :: {:ok, struct()} | {:error, Changeset.t()}
  def insert(%Changeset{valid?: false} = changeset), do: {:error, changeset}

  def insert(%Changeset{} = changeset), do: changeset |> Changeset.apply_changes() |> insert()

  def insert(%{__struct__: schema} = record) do
    record =
      record
      |> fill(:id, &HostApp.Id.uuid/0)
      |> fill(:inserted_at, fn -> DateTime.utc_now() |> DateTime.truncate(:second) end)

    Agent.update(__MODULE__, &Map.put(&1, {schema, record.id}, record))
    {:ok, record}
  end

  @spec update(Changeset.t()) :: {:ok, struct()} | {:error, Changeset.t()}
  def update(%Changeset{valid?: false} = changeset), do: {:error, changeset}

  def update(%Changeset{data: %{__struct__: schema, id: id}} = changeset) when not is_nil(id) do
    record = Changeset.apply_changes(changeset)
    Agent.update(__MODULE__, &Map.put(&1, {schema, id}, record))
    {:ok, record}
  end

  @spec get(module(), term()) :: struct() | nil
  def get(schema, id), do: Agent.get(__MODULE__, &Map.get(&1, {schema, id}))

  @spec all(module()) :: [struct()]
  def all(schema) do
    Agent.get(__MODULE__, fn records ->
      for {{^schema, _id}, record} <- records, do: record
    end)
  end

  defp fill(record, key, default) do
    if Map.has_key?(record, key) and is_nil(Map.get(record, key)),
      do: Map.put(record, key, default.()),
      else: record
  end
end
