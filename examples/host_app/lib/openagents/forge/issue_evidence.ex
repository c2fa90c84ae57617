defmodule OpenAgents.Forge.IssueEvidence do
  @moduledoc """
  Stand-in for the host's `issue_evidence` schema (one receipt edge between a
  commit and an issue): its columns, `__meta__`, and the `artifact_link`
  association.
  """
  @fields ~w(id commit_sha family receipt_id plane environment result actor source
             repository_id issue_id assignment_id transparency_tier artifact_link_id inserted_at)a

  defstruct [__meta__: %{state: :built, source: "issue_evidence"}] ++
              Enum.map(@fields, &{&1, nil}) ++
              [
                artifact_link: %Ecto.Association.NotLoaded{
                  __owner__: __MODULE__,
                  __field__: :artifact_link,
                  __cardinality__: :one
                }
              ]

  @type t :: %__MODULE__{}

  @doc false
  def __schema__(:fields), do: @fields
end
