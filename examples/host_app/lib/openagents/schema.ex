defmodule OpenAgents.Schema do
  @moduledoc """
  What every schema of the host shares: UUID primary and foreign keys (a
  user's id is what a link's `account_id` holds, and what the ladder
  compares), checked as UUIDs when cast, and UTC second timestamps.
  """

  @doc """
  Whether `value` is text PostgreSQL accepts: valid UTF-8 without NUL. A
  lookup by a value from a request asks this first, so a byte PostgreSQL
  refuses is "not found", not a raise.
  """
  @spec text?(term()) :: boolean()
  def text?(value),
    do: is_binary(value) and String.valid?(value) and not String.contains?(value, <<0>>)

  @doc false
  defmacro __using__(_opts) do
    quote do
      use Ecto.Schema
      import Ecto.Changeset
      @primary_key {:id, :binary_id, autogenerate: true}
      # Ecto.UUID, not :binary_id: a foreign key that is not a UUID is refused
      # by the cast (a changeset error), not by the adapter (a raise).
      @foreign_key_type Ecto.UUID
      @timestamps_opts [type: :utc_datetime]
    end
  end
end
