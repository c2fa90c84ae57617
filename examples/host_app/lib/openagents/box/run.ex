defmodule OpenAgents.Box.Run do
  @moduledoc "One run inside a Box; an attempt on a Box names it, never disclosed."
  use OpenAgents.Schema

  schema "box_runs" do
    belongs_to :conversation_box, OpenAgents.Box.ConversationBox
    field :state, :string
    field :command, :string
    timestamps()
  end

  @type t :: %__MODULE__{}
end
