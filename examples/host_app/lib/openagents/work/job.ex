defmodule OpenAgents.Work.Job do
  @moduledoc """
  A unit of delegated work (`work_jobs`): the 29 columns of the host's
  schema, in its order. `status` is a word of the host's vocabulary (or
  `"stopping"` while a cancel is in flight), which `Target.job_lifecycle/1`
  projects. `budget` is published from the bounds half of
  `budget_snapshot` only (`budget_bounds/1`).
  """
  use OpenAgents.Schema

  # The bounds half of `budget_snapshot`: what `budget` publishes at `ledger`.
  @bounds ~w(wall_clock_seconds max_report_bytes max_prompt_bytes)

  # The host's job vocabulary, in its declaration order (the app's
  # `Work.Job.statuses/0`); `"stopping"` is deliberately not in it.
  @statuses ~w(queued running completed failed interrupted budget_exhausted cancelled)

  schema "work_jobs" do
    belongs_to :conversation, OpenAgents.Chat.Conversation
    field :owner_visitor_id, :string
    belongs_to :machine, OpenAgents.Machines.Machine
    field :surface, :string
    field :goal, :string
    field :context_hint, :string
    field :requesting_tool_step_ref, :string
    field :kind, :string
    field :delegation, :map
    field :authority_snapshot, :map
    field :budget_snapshot, :map
    field :status, :string
    field :report, :string
    field :error_code, :string
    field :model_id, :string
    field :instruction_digest, :string
    field :tool_catalog_digest, :string
    field :memory_snapshot_ref, :string
    field :tool_call_count, :integer, default: 0
    field :continuation_count, :integer, default: 0
    field :usage, :map
    field :owner_node, :string
    field :generation, :integer, default: 0
    field :report_message_id, :string
    field :started_at, :utc_datetime
    field :completed_at, :utc_datetime
    timestamps()
  end

  @type t :: %__MODULE__{}

  @doc "Every job status, in declaration order (not `\"stopping\"`, the in-flight cancel's word)."
  @spec statuses() :: [String.t()]
  def statuses, do: @statuses

  @doc "The wall clock, report ceiling and prompt ceiling of the job's budget snapshot."
  @spec budget_bounds(t()) :: map() | nil
  def budget_bounds(%__MODULE__{budget_snapshot: snapshot}) when is_map(snapshot),
    do: Map.take(snapshot, @bounds)

  def budget_bounds(%__MODULE__{}), do: nil
end
