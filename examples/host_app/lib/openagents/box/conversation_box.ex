defmodule OpenAgents.Box.ConversationBox do
  @moduledoc """
  A Box: a managed sandbox a user owns. `state` is a word of the host's Box
  vocabulary (`init` … `error`), which `Target.box_lifecycle/1` projects.
  """
  use OpenAgents.Schema

  schema "conversation_boxes" do
    belongs_to :user, OpenAgents.Accounts.User
    belongs_to :conversation, OpenAgents.Chat.Conversation
    field :state, :string
    field :workspace_path, :string
    timestamps()
  end

  @type t :: %__MODULE__{}
end
