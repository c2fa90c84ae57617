defmodule Ecto.Association.NotLoaded do
  @moduledoc """
  Stand-in for Ecto's marker of an association that was not preloaded. The
  host passes records whose `:artifact_link` is one of these to
  `WorkDisclosure.effective_tier/2`; Ecto itself is not available here, so the
  example defines the struct with Ecto's field names.
  """
  defstruct [:__field__, :__owner__, :__cardinality__]

  @doc false
  def of(owner, field), do: %__MODULE__{__owner__: owner, __field__: field, __cardinality__: :one}
end
