defmodule OpenAgentsPolicy.BitOffsetTest do
  # A binary that starts part-way through a byte is copied by the VM when a
  # NIF reads it, before the NIF knows its size. Every call whose arguments
  # hold a binary larger than `Scheduler.dirty_read_bytes/0` goes to the NIF's
  # `_dirty` NIF, and answers exactly what it answers for the same bytes
  # aligned. The calls are traced: which entry point ran is observed, not
  # timed.
  use ExUnit.Case, async: false

  alias OpenAgents.Delegations.Target
  alias OpenAgents.Transparency.{ArtifactLink, Ladder, WorkDisclosure}
  alias OpenAgentsPolicy.{Native, Scheduler}

  doctest OpenAgentsPolicy.Scheduler

  # `bytes` bytes at a bit offset of 1, and the same bytes aligned.
  defp shifted(bytes, fill) do
    <<_::1, shifted::binary-size(bytes), _::7>> =
      <<0::1, :binary.copy(fill, bytes)::binary, 0::7>>

    {shifted, :binary.copy(shifted)}
  end

  # `fun`'s answer and the Native entry points it called, run in a process of
  # its own (a process is not its own tracer).
  defp traced(fun) do
    parent = self()

    pid =
      spawn_link(fn ->
        receive do
          :go -> send(parent, {:answer, self(), fun.()})
        end
      end)

    :erlang.trace_pattern({Native, :_, :_}, true, [:local])
    :erlang.trace(pid, true, [:call])
    send(pid, :go)
    assert_receive {:answer, ^pid, answer}, 60_000
    ref = :erlang.trace_delivered(pid)
    assert_receive {:trace_delivered, ^pid, ^ref}
    :erlang.trace_pattern({Native, :_, :_}, false, [:local])
    {answer, called(pid, [])}
  end

  defp called(pid, acc) do
    receive do
      {:trace, ^pid, :call, {Native, name, _args}} -> called(pid, [name | acc])
    after
      0 -> Enum.reverse(acc)
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
      linked_tier: fn ->
        WorkDisclosure.effective_tier(%{artifact_link: %{link | account_id: big}}, %{
          account_id: big
        })
      end,
      linked_tier: fn ->
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

  test "a large binary at a bit offset goes to the `_dirty` NIF, with the aligned bytes' answer" do
    {shifted, aligned} = shifted(Scheduler.dirty_read_bytes() + 1, "g")
    assert Scheduler.dirty?(shifted)

    for {{entry, call}, {_, aligned_call}} <- Enum.zip(calls(shifted), calls(aligned)) do
      {answer, called} = traced(call)
      assert :"#{entry}_dirty" in called, "#{entry}: #{inspect(called)}"
      refute :"#{entry}_normal" in called, "#{entry}: #{inspect(called)}"
      assert answer == aligned_call.()
    end
  end

  test "a binary up to the limit stays on the normal scheduler" do
    {shifted, _aligned} = shifted(Scheduler.dirty_read_bytes(), "g")
    refute Scheduler.dirty?(shifted)

    # On the normal NIF, or not in a NIF at all: `effective_tier/2` answers
    # a tier word read by a descriptor from its compiled table, comparing the
    # accounts (binaries a normal scheduler may read) in Elixir.
    for {entry, call} <- calls(shifted) do
      {_answer, called} = traced(call)

      assert :"#{entry}_normal" in called or (entry == :linked_tier and called == []),
             "#{entry}: #{inspect(called)}"

      refute Enum.any?(called, &String.ends_with?(Atom.to_string(&1), "_dirty")), "#{entry}"
    end
  end

  test "a link's revoked_at, however large, is only told from nil: it stays on the normal scheduler" do
    {shifted, _aligned} = shifted(4 * Scheduler.dirty_read_bytes(), "r")
    link = %ArtifactLink{account_id: "acct-1", tier: "glass", revoked_at: shifted}
    record = %{artifact_link: link}

    {answer, called} =
      traced(fn -> WorkDisclosure.effective_tier(record, %{account_id: "acct-1"}) end)

    # A revoked link with a tier word answers from the compiled table.
    assert answer == :dark
    assert called == []

    {answer, called} =
      traced(fn ->
        WorkDisclosure.effective_tier(%{artifact_link: %{link | tier: "bogus"}}, %{
          account_id: "acct-1"
        })
      end)

    assert answer == :dark
    assert :linked_tier_normal in called
    refute :linked_tier_dirty in called
  end

  test "a machine's status, however large, is matched in Elixir and never read by a NIF" do
    {shifted, aligned} = shifted(4 * Scheduler.dirty_read_bytes(), "a")

    for revoked_at <- [nil, ~U[2026-08-25 10:00:00Z]] do
      machine = %OpenAgents.Machines.Machine{status: shifted, revoked_at: revoked_at}
      {answer, called} = traced(fn -> Target.computer_lifecycle(machine, true) end)
      assert called == []
      assert answer == Native.computer_lifecycle(aligned, revoked_at, true)
    end
  end

  test "a large tier word names dark wherever it is read, as a short unknown word does" do
    {shifted, _} = shifted(4 * Scheduler.dirty_read_bytes(), "l")

    assert WorkDisclosure.fields_at(:evidence, shifted) ==
             WorkDisclosure.fields_at(:evidence, "l")

    assert Ladder.name(shifted) == :dark

    assert WorkDisclosure.effective_tier(%{transparency_tier: shifted}, %{tier: :glass}) ==
             WorkDisclosure.effective_tier(%{transparency_tier: "l"}, %{tier: :glass})
  end
end
