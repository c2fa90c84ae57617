defmodule OpenAgents.Forge.Assignment do
  @moduledoc """
  Stand-in for the host's `forge_assignments` schema, shaped as an Ecto
  struct is: the 25 columns, `__meta__`, and 8 associations (not loaded
  unless a caller preloads them). `Map.from_struct/1` of one of these is what
  the host hands `WorkDisclosure.project(:attempt, ...)`.
  """
  @fields ~w(id conversation_id conversation_box_id machine_id repository_id issue_id run_id
             work_job_id target_kind credential_delivery_status credential_delivery_reason
             requesting_principal branch state terminal_branch terminal_commit failure_reason
             deadline_at admitted_at started_at finished_at transparency_tier artifact_link_id
             inserted_at updated_at)a
  @associations ~w(conversation conversation_box machine repository issue run work_job artifact_link)a
  @states ~w(admitted running completed failed cancelled)

  defstruct [__meta__: %{state: :built, source: "forge_assignments"}] ++
              Enum.map(@fields, &{&1, nil}) ++
              Enum.map(
                @associations,
                &{&1,
                 %Ecto.Association.NotLoaded{
                   __owner__: __MODULE__,
                   __field__: &1,
                   __cardinality__: :one
                 }}
              )

  @type t :: %__MODULE__{}

  @doc false
  def __schema__(:fields), do: @fields
  def __schema__(:associations), do: @associations

  @spec states() :: [String.t()]
  def states, do: @states

  @doc "`user` or `agent`: the kind half of `requesting_principal`; its id is never published."
  @spec requester_kind(t()) :: String.t() | nil
  def requester_kind(%__MODULE__{requesting_principal: %{"type" => kind}})
      when kind in ["user", "agent"],
      do: kind

  def requester_kind(%__MODULE__{}), do: nil
end
