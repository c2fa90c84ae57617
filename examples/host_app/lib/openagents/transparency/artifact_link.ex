defmodule OpenAgents.Transparency.ArtifactLink do
  @moduledoc """
  A consent-bearing link (`artifact_links`): who consented (`account_id`), to
  what (`artifact_type`, `artifact_ref`), at which `tier`. Live while
  `revoked_at` is nil; a revoked link keeps a `revocation_tombstone`.

  The library inserts `changeset/2` of what its core mints with
  `OpenAgents.Repo.insert/1`: a refusal comes back from `link_for_attempt/3`
  as `{:error, changeset}`. An attempt's link is minted with `artifact_ref:
  "id"` and bound to the attempt's id in the same transaction
  (`HostApp.Attempts.create/4`): one link per attempt, by the unique index.
  """
  @behaviour OpenAgentsPolicy.Host.ArtifactLink
  use OpenAgents.Schema

  @tiers ~w(dark pulse ledger glass)
  @artifact_types ~w(changelog release issue build attempt work_job deployment trace)

  schema "artifact_links" do
    belongs_to :account, OpenAgents.Accounts.User
    belongs_to :repository, OpenAgents.Repositories.Repository
    field :artifact_type, :string
    field :artifact_ref, :string
    field :tier, :string
    field :consent, :map
    field :authority_snapshot, :map
    field :revoked_at, :utc_datetime
    field :revocation_tombstone, :map
    timestamps(updated_at: false)
  end

  @type t :: %__MODULE__{}

  @doc """
  A new link: casts every column but the id and timestamp, requires who, what
  and at which tier, and turns the unique index on (`artifact_type`,
  `artifact_ref`) and the foreign keys into changeset errors.
  """
  @spec changeset(t(), map()) :: Ecto.Changeset.t()
  def changeset(%__MODULE__{} = link, attrs) do
    link
    |> cast(attrs, [
      :account_id,
      :repository_id,
      :artifact_type,
      :artifact_ref,
      :tier,
      :consent,
      :authority_snapshot,
      :revoked_at,
      :revocation_tombstone
    ])
    |> validate_required([
      :account_id,
      :repository_id,
      :artifact_type,
      :artifact_ref,
      :tier,
      :consent
    ])
    |> validate_inclusion(:tier, @tiers)
    |> validate_inclusion(:artifact_type, @artifact_types)
    |> unique_constraint([:artifact_type, :artifact_ref])
    |> foreign_key_constraint(:account_id)
    |> foreign_key_constraint(:repository_id)
  end

  @doc "Binds the link to the artifact it was minted for: its `artifact_ref` becomes that row's id."
  @spec bind_changeset(t(), String.t()) :: Ecto.Changeset.t()
  def bind_changeset(%__MODULE__{} = link, ref) when is_binary(ref) do
    link
    |> change(artifact_ref: ref)
    |> unique_constraint([:artifact_type, :artifact_ref])
  end

  @doc "The host's revocation stamp: `revoked_at` now, and a tombstone saying who and why."
  @spec revoke_changeset(t(), map()) :: Ecto.Changeset.t()
  def revoke_changeset(%__MODULE__{} = link, tombstone) when is_map(tombstone) do
    change(link,
      revoked_at: DateTime.utc_now() |> DateTime.truncate(:second),
      revocation_tombstone: tombstone
    )
  end
end
