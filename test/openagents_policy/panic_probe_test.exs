defmodule OpenAgentsPolicy.PanicProbeTest do
  # The core has a test-only cargo feature, `panic_probe`, with which
  # `job_lifecycle/1` panics on the word "panic_probe" (the core's
  # `target::PANIC_PROBE`); scripts/faults/ builds the NIF with it to watch a
  # panic inside a decision. The library that `mix compile` builds and
  # installs, the one these tests load and a release carries, must not have
  # it: the probe word is an unknown job status like any other.
  use ExUnit.Case, async: true

  alias OpenAgents.Delegations.Target

  @probe "panic_probe"

  test "the installed library is built without the panic_probe feature" do
    assert Target.job_lifecycle(@probe) == "failed"
    assert Target.delegation_seam(Target.job_lifecycle(@probe))["lifecycle"] == "failed"
  end
end
