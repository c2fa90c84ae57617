defmodule OpenAgents.Schema do
  @moduledoc """
  What every schema of the host shares: UUID primary and foreign keys (a
  user's id is what a link's `account_id` holds, and what the ladder
  compares) and UTC second timestamps.
  """

  @doc false
  defmacro __using__(_opts) do
    quote do
      use Ecto.Schema
      import Ecto.Changeset
      @primary_key {:id, :binary_id, autogenerate: true}
      @foreign_key_type :binary_id
      @timestamps_opts [type: :utc_datetime]
    end
  end
end
