defmodule OpenAgents.Work.Job do
  @moduledoc "Stand-in for the host's `work_jobs` schema: its columns and `__meta__`."
  @fields ~w(id conversation_id owner_visitor_id machine_id surface goal context_hint
             requesting_tool_step_ref kind delegation authority_snapshot budget_snapshot status
             report error_code model_id instruction_digest tool_catalog_digest memory_snapshot_ref
             tool_call_count continuation_count usage owner_node generation report_message_id
             started_at completed_at inserted_at updated_at)a
  @statuses ~w(queued running completed failed interrupted budget_exhausted cancelled)
  @terminal_statuses ~w(completed failed interrupted budget_exhausted cancelled)
  # The bounds half of `budget_snapshot`: what `budget` publishes at `ledger`.
  @bounds ~w(wall_clock_seconds max_report_bytes max_prompt_bytes)

  defstruct [__meta__: %{state: :built, source: "work_jobs"}] ++ Enum.map(@fields, &{&1, nil})

  @type t :: %__MODULE__{}

  @doc false
  def __schema__(:fields), do: @fields

  def statuses, do: @statuses
  def terminal_statuses, do: @terminal_statuses

  @doc "The wall clock, report ceiling and prompt ceiling of the job's budget snapshot."
  @spec budget_bounds(t()) :: map() | nil
  def budget_bounds(%__MODULE__{budget_snapshot: snapshot}) when is_map(snapshot),
    do: Map.take(snapshot, @bounds)

  def budget_bounds(%__MODULE__{}), do: nil
end
