defmodule HostApp.Delegations do
  @moduledoc """
  The authenticated API's target inventory, calling the library the way the
  host's `OpenAgents.Delegations.inventory/2` does: at most 32 targets, and for
  each one lifecycle projection (`box_lifecycle/1` or `computer_lifecycle/2`)
  followed by exactly one `seam/3` with the caller's per-kind reach.

  A target is `%{kind: "box", id: id, state: conversation_box_state}` or
  `%{kind: "computer", machine: %Machine{}, online?: boolean}`. `reach` is
  the per-kind authority the caller already proved, `%{"box" => bool,
  "computer" => bool}`; a kind missing from it is unauthorized.

  Each entry is the seam document plus the reference, the kind, and the
  substrate's own state, which travels beside the unified lifecycle untouched.
  """
  alias OpenAgents.Delegations.Target
  alias OpenAgents.Machines.Machine

  @max_targets 32

  @spec max_targets() :: pos_integer()
  def max_targets, do: @max_targets

  @spec inventory([map()], map()) :: {:ok, [map()]} | {:error, {:too_many_targets, pos_integer()}}
  def inventory(targets, reach) when is_list(targets) and is_map(reach) do
    case length(targets) do
      n when n > @max_targets -> {:error, {:too_many_targets, n}}
      _ -> {:ok, Enum.map(targets, &entry(&1, reach))}
    end
  end

  @doc "One target's inventory entry: its lifecycle, then its seam."
  @spec entry(map(), map()) :: map()
  def entry(%{kind: "box", id: id, state: state}, reach) do
    lifecycle = Target.box_lifecycle(state)

    "box"
    |> Target.seam(lifecycle, Map.get(reach, "box", false))
    |> Map.merge(%{"ref" => "box:" <> id, "kind" => "box", "substrate_state" => state})
  end

  def entry(%{kind: "computer", machine: %Machine{} = machine, online?: online?}, reach) do
    lifecycle = Target.computer_lifecycle(machine, online?)

    "computer"
    |> Target.seam(lifecycle, Map.get(reach, "computer", false))
    |> Map.merge(%{
      "ref" => "computer:" <> machine.id,
      "kind" => "computer",
      "substrate_state" => machine.status
    })
  end
end
