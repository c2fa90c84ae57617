defmodule OpenAgents.Forge.Assignment do
  @moduledoc """
  One attempt at an issue (`forge_assignments`): the 25 columns of the
  host's schema, in its order, `__meta__`, and 8 associations.
  `Map.from_struct/1` of one, plus `:requester_kind`, is what the host hands
  `WorkDisclosure.project(:attempt, ...)`; its `:artifact_link` is what
  `effective_tier/2` reads (preloaded, `nil`, or not loaded).

  `requesting_principal` is `%{"type" => "user" | "agent", "id" => id}`:
  only its kind is ever published, as `requester_kind`.
  """
  use OpenAgents.Schema

  @states ~w(admitted running completed failed cancelled)
  @target_kinds ~w(box computer)

  schema "forge_assignments" do
    belongs_to :conversation, OpenAgents.Chat.Conversation
    belongs_to :conversation_box, OpenAgents.Box.ConversationBox
    belongs_to :machine, OpenAgents.Machines.Machine
    belongs_to :repository, OpenAgents.Repositories.Repository
    belongs_to :issue, OpenAgents.Forge.Issue
    belongs_to :run, OpenAgents.Box.Run
    belongs_to :work_job, OpenAgents.Work.Job
    field :target_kind, :string
    field :credential_delivery_status, :string
    field :credential_delivery_reason, :string
    field :requesting_principal, :map
    field :branch, :string
    field :state, :string
    field :terminal_branch, :string
    field :terminal_commit, :string
    field :failure_reason, :string
    field :deadline_at, :utc_datetime
    field :admitted_at, :utc_datetime
    field :started_at, :utc_datetime
    field :finished_at, :utc_datetime
    field :transparency_tier, :string
    belongs_to :artifact_link, OpenAgents.Transparency.ArtifactLink
    # Microseconds: the attempts page lists oldest first, and two attempts of
    # the same second must keep the order they were requested in.
    timestamps(type: :utc_datetime_usec)
  end

  @type t :: %__MODULE__{}

  @doc "The host's attempt states."
  @spec states() :: [String.t()]
  def states, do: @states

  @doc """
  A new attempt. Requires the repository, the issue, the target kind, the
  principal, the state and the tier column; the foreign keys and the unique
  link become changeset errors.
  """
  @spec changeset(t(), map()) :: Ecto.Changeset.t()
  def changeset(%__MODULE__{} = assignment, attrs) do
    assignment
    |> cast(attrs, __schema__(:fields) -- [:id, :inserted_at, :updated_at])
    |> validate_required([
      :repository_id,
      :issue_id,
      :target_kind,
      :requesting_principal,
      :state,
      :transparency_tier
    ])
    |> validate_inclusion(:target_kind, @target_kinds)
    |> validate_inclusion(:state, @states)
    |> foreign_key_constraint(:repository_id)
    |> foreign_key_constraint(:issue_id)
    |> unique_constraint(:artifact_link_id)
  end

  @doc "`user` or `agent`: the kind half of `requesting_principal`; its id is never published."
  @spec requester_kind(t()) :: String.t() | nil
  def requester_kind(%__MODULE__{requesting_principal: %{"type" => kind}})
      when kind in ["user", "agent"],
      do: kind

  def requester_kind(%__MODULE__{}), do: nil
end
