defmodule OpenAgents.Accounts.User do
  @moduledoc """
  A user. `handle` is unique and is what the API's bearer token names;
  `admin` makes the user an operator, which `OpenAgents.Accounts.admin?/1`
  reads from the database. The library recognises this struct by its name.
  """
  use OpenAgents.Schema

  schema "users" do
    field :handle, :string
    field :admin, :boolean, default: false
    timestamps()
  end

  @type t :: %__MODULE__{}

  @doc "A new user: a handle (unique) and whether it is an operator."
  @spec changeset(t(), map()) :: Ecto.Changeset.t()
  def changeset(user, attrs) do
    user
    |> cast(attrs, [:handle, :admin])
    |> validate_required([:handle])
    |> unique_constraint(:handle)
  end
end
