defmodule OpenAgents.Repositories.Repository do
  @moduledoc "A repository, addressed by its unique `slug`; its members are rows of `repository_memberships`."
  use OpenAgents.Schema

  schema "repositories" do
    field :slug, :string
    field :name, :string
    many_to_many :members, OpenAgents.Accounts.User, join_through: "repository_memberships"
    timestamps()
  end

  @type t :: %__MODULE__{}

  @doc "A new repository: slug (unique) and name."
  @spec changeset(t(), map()) :: Ecto.Changeset.t()
  def changeset(repository, attrs) do
    repository
    |> cast(attrs, [:slug, :name])
    |> validate_required([:slug, :name])
    |> unique_constraint(:slug)
  end
end
