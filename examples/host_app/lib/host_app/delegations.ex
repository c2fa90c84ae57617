defmodule HostApp.Delegations do
  @moduledoc """
  The API's target inventory, as the host's `Delegations.inventory/2` calls
  the library: at most 32 targets, each one lifecycle projection
  (`box_lifecycle/1`, or `computer_lifecycle/2` with whether it is online)
  and one `seam/3`, authorized when the reader owns it (an operator sees
  every target). An entry: `%{"ref" => "box:<id>" | "computer:<id>",
  "substrate_state" => word, "seam" => seam}`.
  """
  alias OpenAgents.Box.ConversationBox
  alias OpenAgents.Delegations.Target
  alias OpenAgents.Machines.Machine

  @max_targets 32

  @typedoc "A Box, a queued fan-out item, or a Computer with its live reachability."
  @type target ::
          ConversationBox.t()
          | %{kind: String.t(), id: String.t(), state: String.t()}
          | %{machine: Machine.t(), online?: boolean()}

  @doc "The most targets one inventory lists."
  @spec max_targets() :: pos_integer()
  def max_targets, do: @max_targets

  @doc """
  The entries of `targets` for the user whose id is `user_id`, each
  authorized when that user owns it; more than 32 targets is refused, not
  truncated.
  """
  @spec inventory([target()], String.t() | nil) ::
          {:ok, [map()]} | {:error, {:too_many_targets, pos_integer()}}
  def inventory(targets, user_id) when is_list(targets) do
    case length(targets) do
      n when n > @max_targets -> {:error, {:too_many_targets, n}}
      _ -> {:ok, Enum.map(targets, &entry(&1, owner_id(&1) == user_id and user_id != nil))}
    end
  end

  defp owner_id(%ConversationBox{user_id: id}), do: id
  defp owner_id(%{machine: %Machine{user_id: id}}), do: id
  defp owner_id(_other), do: nil

  @doc "One target's entry: its lifecycle, then its seam, with `authorized?` the caller's reach."
  @spec entry(target(), boolean()) :: map()
  def entry(%ConversationBox{id: id, state: state}, authorized?),
    do: entry(%{kind: "box", id: id, state: state}, authorized?)

  def entry(%{kind: "box", id: id, state: state}, authorized?) do
    lifecycle = Target.box_lifecycle(state)

    %{
      "ref" => "box:" <> id,
      "substrate_state" => state,
      "seam" => Target.seam("box", lifecycle, authorized?)
    }
  end

  def entry(%{machine: %Machine{} = machine, online?: online?}, authorized?) do
    lifecycle = Target.computer_lifecycle(machine, online?)

    %{
      "ref" => "computer:" <> machine.id,
      "substrate_state" => machine.status,
      "seam" => Target.seam("computer", lifecycle, authorized?)
    }
  end
end
