defmodule OpenAgents.Transparency.ArtifactLink do
  @moduledoc """
  Stand-in for the host's `artifact_links` schema: a plain struct with the
  upstream columns, and a `changeset/2` that casts and validates like the
  host's Ecto changeset does.
  """
  alias HostApp.Changeset

  @fields ~w(id account_id repository_id artifact_type artifact_ref tier consent
             authority_snapshot revoked_at revocation_tombstone inserted_at)a
  @tiers ~w(dark pulse ledger glass)
  @artifact_types ~w(changelog release issue build attempt work_job deployment trace)

  defstruct @fields
  @type t :: %__MODULE__{}

  @doc false
  def __schema__(:fields), do: @fields

  @spec tiers() :: [String.t()]
  def tiers, do: @tiers

  @spec changeset(t(), map()) :: Changeset.t()
  def changeset(%__MODULE__{} = link, attrs) do
    link
    |> Changeset.cast(attrs, @fields -- [:id, :inserted_at])
    |> Changeset.validate_required([
      :account_id,
      :repository_id,
      :artifact_type,
      :artifact_ref,
      :tier,
      :consent
    ])
    |> Changeset.validate_inclusion(:tier, @tiers)
    |> Changeset.validate_inclusion(:artifact_type, @artifact_types)
  end

  @doc "The host's `Transparency.revoke/3`, reduced to the stamp: `revoked_at` and a tombstone."
  @spec revoke_changeset(t(), String.t()) :: Changeset.t()
  def revoke_changeset(%__MODULE__{} = link, reason) do
    Changeset.cast(
      link,
      %{
        revoked_at: DateTime.utc_now() |> DateTime.truncate(:second),
        revocation_tombstone: %{"reason" => reason}
      },
      [:revoked_at, :revocation_tombstone]
    )
  end
end
