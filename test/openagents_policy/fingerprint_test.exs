defmodule OpenAgentsPolicy.FingerprintTest do
  use ExUnit.Case, async: true
  doctest OpenAgentsPolicy

  # The Rust core's tests hold the digest to its golden value and watch a
  # changed rule move it (native/openagents_policy/tests/fingerprint.rs);
  # here, that the NIF serves the core's document and that the file named is
  # the one this VM loaded.
  test "the digest is the SHA-256 of the core's document, the same on every call" do
    %{decision_digest: digest} = OpenAgentsPolicy.fingerprint()
    json = OpenAgentsPolicy.decisions_json()
    assert OpenAgentsPolicy.Native.sha256(json) == digest

    assert OpenAgentsPolicy.Native.sha256("abc") ==
             "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

    tables = Jason.decode!(json)

    assert Enum.map(tables["schedule"], & &1["family"]) ==
             Enum.map(OpenAgents.Transparency.WorkDisclosure.families(), &to_string/1)

    tasks =
      for _ <- 1..8, do: Task.async(fn -> OpenAgentsPolicy.fingerprint().decision_digest end)

    assert Enum.uniq(Task.await_many(tasks)) == [digest]
  end

  test "the NIF library is the loaded file, named by its own SHA-256" do
    %{nif: nif} = OpenAgentsPolicy.fingerprint()
    assert nif.file == OpenAgentsPolicy.Native.library_file()
    assert nif.name_matches
    assert nif.mapped in [true, :unknown]
    if match?({:unix, :linux}, :os.type()), do: assert(nif.mapped == true)
  end
end
