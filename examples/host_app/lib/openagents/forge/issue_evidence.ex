defmodule OpenAgents.Forge.IssueEvidence do
  @moduledoc """
  One receipt edge between a commit and an issue (`issue_evidence`), with
  the host's 15 columns in its order. Like an attempt it carries its own
  `transparency_tier` and `artifact_link`, which `effective_tier/2` reads.
  """
  use OpenAgents.Schema

  schema "issue_evidence" do
    field :commit_sha, :string
    field :family, :string
    field :receipt_id, :string
    field :plane, :string
    field :environment, :string
    field :result, :string
    field :actor, :map
    field :source, :string
    belongs_to :repository, OpenAgents.Repositories.Repository
    belongs_to :issue, OpenAgents.Forge.Issue
    belongs_to :assignment, OpenAgents.Forge.Assignment
    field :transparency_tier, :string
    belongs_to :artifact_link, OpenAgents.Transparency.ArtifactLink
    timestamps(updated_at: false)
  end

  @type t :: %__MODULE__{}
end
