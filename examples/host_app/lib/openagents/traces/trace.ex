defmodule OpenAgents.Traces.Trace do
  @moduledoc """
  Stand-in for the host's `traces` schema: one uploaded ATIF trajectory of an
  attempt. `document` is the whole run (every prompt, message and tool call),
  read for its schema version and step count and never published.
  """
  @fields ~w(id user_id digest visibility document byte_size assignment_id inserted_at)a

  defstruct [__meta__: %{state: :built, source: "traces"}] ++ Enum.map(@fields, &{&1, nil})

  @type t :: %__MODULE__{}

  @doc false
  def __schema__(:fields), do: @fields

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
