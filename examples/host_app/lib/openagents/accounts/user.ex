defmodule OpenAgents.Accounts.User do
  @moduledoc """
  A user. `handle` is unique and is what the API's bearer token names;
  `operator` (the `admin` column) makes the user an operator, which
  `OpenAgents.Accounts.admin?/1` reads from the database. The library
  recognises this struct by its name.

  The field is deliberately not named `admin`: the library reads any map with
  `admin: true` (a struct included) as an operator, as the seeds'
  `Transparency` does, before it asks `admin?/1`. A struct carrying its own
  `admin` field would read as an operator from a stale copy, after a
  demotion `admin?/1` already sees.
  """
  use OpenAgents.Schema

  schema "users" do
    field :handle, :string
    field :operator, :boolean, default: false, source: :admin
    timestamps()
  end

  @type t :: %__MODULE__{}

  @doc "A new user: a handle (unique) and whether it is an operator (`operator`)."
  @spec changeset(t(), map()) :: Ecto.Changeset.t()
  def changeset(user, attrs) do
    user
    |> cast(attrs, [:handle, :operator])
    |> validate_required([:handle])
    |> unique_constraint(:handle)
  end
end
