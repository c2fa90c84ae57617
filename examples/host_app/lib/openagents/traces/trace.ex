defmodule OpenAgents.Traces.Trace do
  @moduledoc """
  One uploaded trajectory of an attempt (`traces`), with the host's 8
  columns. `document` is the whole run (every prompt, message and tool call):
  it is read for its schema version and step count, and never published.
  """
  use OpenAgents.Schema

  schema "traces" do
    belongs_to :user, OpenAgents.Accounts.User
    field :digest, :string
    field :visibility, :string, default: "public"
    field :document, :map
    field :byte_size, :integer
    belongs_to :assignment, OpenAgents.Forge.Assignment
    timestamps(updated_at: false)
  end

  @type t :: %__MODULE__{}

  @doc "The document's format name, e.g. `ATIF-v1.7`."
  @spec schema_version(t()) :: String.t() | nil
  def schema_version(%__MODULE__{document: %{"schema_version" => version}}), do: version
  def schema_version(%__MODULE__{}), do: nil

  @doc "How many steps the trajectory has."
  @spec step_count(t()) :: non_neg_integer() | nil
  def step_count(%__MODULE__{document: %{"steps" => steps}}) when is_list(steps),
    do: length(steps)

  def step_count(%__MODULE__{}), do: nil
end
