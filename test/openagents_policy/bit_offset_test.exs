defmodule OpenAgentsPolicy.BitOffsetTest do
  # A binary that starts part-way through a byte is copied by the VM when a
  # NIF reads it, before the NIF knows its size. No NIF a call reaches is
  # handed one longer than 64 bytes: `OpenAgentsPolicy.Host` bounds each term
  # before the call (a tier past 64 bytes is no word, and crosses as `nil`),
  # so a 1 MB one holds no normal scheduler, and answers what the same bytes
  # aligned answer. The calls are traced: what each NIF was handed is
  # observed, not timed.
  use ExUnit.Case, async: false

  alias OpenAgents.Delegations.Target
  alias OpenAgents.Transparency.{ArtifactLink, Ladder, WorkDisclosure}
  alias OpenAgentsPolicy.Native
  alias OpenAgentsPolicy.Test.NifTrace

  @large 1_048_576

  # `bytes` bytes at a bit offset of 1 (within their first byte), and the same
  # bytes aligned. The length travels in the matched binary itself, so the
  # size is bound inside the match (Elixir 1.20 asks a size from outside it
  # to be pinned, which Elixir 1.14 does not accept).
  defp shifted(bytes, fill) do
    <<length::32, _::1, shifted::binary-size(length), _::7>> =
      <<bytes::32, 0::1, :binary.copy(fill, bytes)::binary, 0::7>>

    {shifted, :binary.copy(shifted)}
  end

  # Every NIF call `fun` made handed it binaries of at most 64 bytes.
  defp assert_bounded(called, what) do
    for {name, args} <- called do
      {bytes, _depth, _width} = NifTrace.largest(args)
      assert bytes <= 64, "#{what}: #{name} was handed #{bytes} bytes"
    end
  end

  defp calls(big) do
    link = %ArtifactLink{account_id: "acct-1", tier: "ledger", revoked_at: nil}

    [
      fields_at: fn -> WorkDisclosure.fields_at(:attempt, big) end,
      project: fn -> WorkDisclosure.project(:trace, %{id: 1}, big) end,
      effective_tier: fn ->
        WorkDisclosure.effective_tier(%{transparency_tier: big}, %{tier: :glass})
      end,
      effective_tier: fn -> WorkDisclosure.effective_tier(%{artifact_link: nil}, big) end,
      effective_tier: fn ->
        WorkDisclosure.effective_tier(%{artifact_link: %{link | account_id: big}}, %{
          account_id: big
        })
      end,
      effective_tier: fn ->
        WorkDisclosure.effective_tier(%{artifact_link: link}, %{account_id: big, tier: :pulse})
      end,
      link_for_attempt: fn ->
        WorkDisclosure.link_for_attempt(%{id: "r"}, %{"type" => big, "id" => "acct-1"})
      end,
      ladder_name: fn -> Ladder.name(big) end,
      ladder_rank: fn -> Ladder.rank(big) end,
      ladder_viewer_tier: fn -> Ladder.viewer_tier(%{tier: big}) end,
      ladder_clamp: fn -> Ladder.clamp(big, %{tier: :ledger}) end,
      ladder_effective_tier: fn -> Ladder.effective_tier(big, %{account_id: big}) end,
      ladder_allows: fn -> Ladder.allows?(%{link | tier: big}, :metadata, nil) end
    ]
  end

  test "a 1 MB binary at a bit offset reaches no NIF, and answers what the aligned bytes answer" do
    {shifted, aligned} = shifted(@large, "g")

    for {{entry, call}, {_, aligned_call}} <- Enum.zip(calls(shifted), calls(aligned)) do
      {answer, called} = NifTrace.traced(call)
      assert_bounded(called, entry)
      assert answer == aligned_call.(), "#{entry}"
    end
  end

  test "a binary of 64 bytes or fewer reaches the NIF as it is, read by the core" do
    {shifted, aligned} = shifted(64, "g")

    for {{entry, call}, {_, aligned_call}} <- Enum.zip(calls(shifted), calls(aligned)) do
      {answer, called} = NifTrace.traced(call)
      assert_bounded(called, entry)
      assert answer == aligned_call.(), "#{entry}"
    end

    {_answer, called} = NifTrace.traced(fn -> Ladder.name(shifted) end)
    assert [{:ladder_name, [^shifted]}] = called
  end

  test "a link's revoked_at, however large, is only told from nil, and never handed to a NIF" do
    {shifted, _aligned} = shifted(4 * @large, "r")
    link = %ArtifactLink{account_id: "acct-1", tier: "glass", revoked_at: shifted}
    record = %{artifact_link: link}

    {answer, called} =
      NifTrace.traced(fn -> WorkDisclosure.effective_tier(record, %{account_id: "acct-1"}) end)

    # A revoked link with a tier word answers from the compiled table.
    assert answer == :dark
    assert called == []

    {answer, called} =
      NifTrace.traced(fn ->
        WorkDisclosure.effective_tier(%{artifact_link: %{link | tier: "bogus"}}, %{
          account_id: "acct-1"
        })
      end)

    assert answer == :dark
    assert [{:effective_tier, [{:linked, :revoked, "bogus", false}, :nobody]}] = called
  end

  test "a machine's status, however large, is matched in Elixir and never read by a NIF" do
    {shifted, aligned} = shifted(4 * @large, "a")

    for revoked_at <- [nil, ~U[2026-08-25 10:00:00Z]] do
      machine = %OpenAgents.Machines.Machine{status: shifted, revoked_at: revoked_at}
      {answer, called} = NifTrace.traced(fn -> Target.computer_lifecycle(machine, true) end)
      assert called == []
      assert answer == Native.computer_lifecycle(aligned, revoked_at, true)
    end
  end

  test "a large tier word names dark wherever it is read, as a short unknown word does" do
    {shifted, _} = shifted(4 * @large, "l")

    assert WorkDisclosure.fields_at(:evidence, shifted) ==
             WorkDisclosure.fields_at(:evidence, "l")

    assert Ladder.name(shifted) == :dark

    assert WorkDisclosure.effective_tier(%{transparency_tier: shifted}, %{tier: :glass}) ==
             WorkDisclosure.effective_tier(%{transparency_tier: "l"}, %{tier: :glass})
  end
end
