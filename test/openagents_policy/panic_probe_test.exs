defmodule OpenAgentsPolicy.PanicProbeTest do
  # The core has a test-only cargo feature, `panic_probe`, with which reading
  # the tier word "panic_probe" (the core's `ladder::PANIC_PROBE`) panics in
  # `ladder::read_tier`, the decision the NIF asks of every tier binary at run
  # time; examples/drills/faults/ builds the NIF with it to watch a panic inside a
  # decision. The library that `mix compile` builds and installs, the one these
  # tests load and a release carries, must not have it: the probe word is an
  # unknown tier word like any other, and names dark.
  use ExUnit.Case, async: true

  alias OpenAgents.Transparency.{Ladder, WorkDisclosure}

  @probe "panic_probe"

  test "the installed library is built without the panic_probe feature" do
    # The host's path: a record with no loaded link, read by its tier column.
    for viewer <- [nil, %{account_id: "a", tier: :ledger}, %{tier: :glass}, :glass] do
      assert WorkDisclosure.effective_tier(%{transparency_tier: @probe}, viewer) == :dark
    end

    assert WorkDisclosure.effective_tier(%{transparency_tier: @probe}, %{admin: true}) == :glass
    assert WorkDisclosure.fields_at(:attempt, @probe) == []
    assert Ladder.name(@probe) == :dark
    assert Ladder.effective_tier(@probe, nil) == :dark
  end
end
