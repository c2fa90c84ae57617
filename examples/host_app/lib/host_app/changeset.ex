defmodule HostApp.Changeset do
  @moduledoc """
  The little of `Ecto.Changeset` the stand-in host needs: the data, the cast
  changes, the errors, and whether it is valid. `OpenAgents.Repo` applies it.
  """
  defstruct data: nil, changes: %{}, errors: [], valid?: true

  @type t :: %__MODULE__{data: struct(), changes: map(), errors: keyword(), valid?: boolean()}

  @doc "Casts the `permitted` keys of `attrs` (atom or string keys) onto `data`."
  @spec cast(struct(), map(), [atom()]) :: t()
  def cast(data, attrs, permitted) do
    changes =
      for key <- permitted, reduce: %{} do
        acc ->
          case fetch(attrs, key) do
            {:ok, value} -> Map.put(acc, key, value)
            :error -> acc
          end
      end

    %__MODULE__{data: data, changes: changes}
  end

  @doc "Marks every key of `keys` that is absent or nil after the changes as required."
  @spec validate_required(t(), [atom()]) :: t()
  def validate_required(%__MODULE__{} = cs, keys) do
    Enum.reduce(keys, cs, fn key, cs ->
      if is_nil(get_field(cs, key)), do: add_error(cs, key, "can't be blank"), else: cs
    end)
  end

  @doc "Requires `key`, when present, to be one of `values`."
  @spec validate_inclusion(t(), atom(), [term()]) :: t()
  def validate_inclusion(%__MODULE__{} = cs, key, values) do
    case get_field(cs, key) do
      nil -> cs
      value -> if value in values, do: cs, else: add_error(cs, key, "is invalid")
    end
  end

  @spec get_field(t(), atom()) :: term()
  def get_field(%__MODULE__{data: data, changes: changes}, key),
    do: Map.get(changes, key, Map.get(data, key))

  @spec add_error(t(), atom(), String.t()) :: t()
  def add_error(%__MODULE__{} = cs, key, message),
    do: %{cs | errors: cs.errors ++ [{key, message}], valid?: false}

  @doc "The data with the changes applied."
  @spec apply_changes(t()) :: struct()
  def apply_changes(%__MODULE__{data: data, changes: changes}), do: struct(data, changes)

  defp fetch(attrs, key) do
    case Map.fetch(attrs, key) do
      {:ok, value} -> {:ok, value}
      :error -> Map.fetch(attrs, Atom.to_string(key))
    end
  end
end
