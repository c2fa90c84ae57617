defmodule OpenAgentsPolicy.FingerprintTest do
  use ExUnit.Case, async: true
  doctest OpenAgentsPolicy

  alias OpenAgentsPolicy.Native

  # The Rust tests hold the document to the package's and watch any changed
  # answer move the digest (native/openagents_policy_decisions/tests/document.rs);
  # here, that the NIF serves the core's document and that the file named is
  # the one this VM loaded.
  test "the digest is the SHA-256 of the core's document, the same on every call" do
    %{decision_digest: digest} = OpenAgentsPolicy.fingerprint()
    json = OpenAgentsPolicy.decisions_json()
    assert Base.encode16(:crypto.hash(:sha256, json), case: :lower) == digest

    %{"format" => 3, "rows" => rows} = Jason.decode!(json)

    assert for(["schedule.never", %{"family" => family}, _] <- rows, do: family) ==
             Enum.map(OpenAgents.Transparency.WorkDisclosure.families(), &to_string/1)

    tasks =
      for _ <- 1..8, do: Task.async(fn -> OpenAgentsPolicy.fingerprint().decision_digest end)

    assert Enum.uniq(Task.await_many(tasks)) == [digest]
  end

  test "the NIF library is the file Native loaded: its bytes' SHA-256" do
    %{nif: nif} = OpenAgentsPolicy.fingerprint()
    assert nif |> Map.keys() |> Enum.sort() == [:file, :sha256]

    assert nif.file == Native.library_file()
    assert Path.dirname(nif.file) == Application.app_dir(:openagents_policy, "priv/native")

    # Computed here apart from the NIF (which computes the fingerprint's).
    bytes = File.read!(nif.file)
    assert nif.sha256 == :sha256 |> :crypto.hash(bytes) |> Base.encode16(case: :lower)

    if match?({:unix, :linux}, :os.type()) do
      # The file is the one mapped into this VM, by this test's reading: a line
      # of /proc/self/maps with its inode (the kernel names the file by its
      # resolved path, and priv/ may be a symlink to the checkout's priv/).
      inode = Integer.to_string(File.stat!(nif.file).inode)

      assert "/proc/self/maps"
             |> File.read!()
             |> String.split("\n", trim: true)
             |> Enum.any?(
               &match?([_, _, _, _, ^inode, _path], String.split(&1, ~r/\s+/, parts: 6))
             )
    end
  end
end
