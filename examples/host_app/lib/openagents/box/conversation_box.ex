defmodule OpenAgents.Box.ConversationBox do
  @moduledoc """
  A Box: a managed sandbox a user owns. `state` is a word of the host's Box
  vocabulary (`init` … `error`), which `Target.box_lifecycle/1` projects.
  """
  use OpenAgents.Schema

  # The host's Box vocabulary, in its declaration order (the app's
  # `Box.ConversationBox.states/0`).
  @states ~w(init provisioning provisioned cloning ready idle running archiving archived error)

  schema "conversation_boxes" do
    belongs_to :user, OpenAgents.Accounts.User
    belongs_to :conversation, OpenAgents.Chat.Conversation
    field :state, :string
    field :workspace_path, :string
    timestamps()
  end

  @type t :: %__MODULE__{}

  @doc "Every Box state, in declaration order: the words `state` holds."
  @spec states() :: [String.t()]
  def states, do: @states
end
