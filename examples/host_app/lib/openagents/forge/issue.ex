defmodule OpenAgents.Forge.Issue do
  @moduledoc "An issue of a repository, addressed by its number (unique per repository)."
  use OpenAgents.Schema

  schema "issues" do
    belongs_to :repository, OpenAgents.Repositories.Repository
    field :number, :integer
    field :title, :string
    timestamps()
  end

  @type t :: %__MODULE__{}
end
