defmodule OpenAgents.Chat.Conversation do
  @moduledoc "The chat an attempt or a job was requested from: never disclosed."
  use OpenAgents.Schema

  schema "conversations" do
    belongs_to :user, OpenAgents.Accounts.User
    field :title, :string
    timestamps()
  end

  @type t :: %__MODULE__{}
end
