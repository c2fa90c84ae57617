# How long a call holds a normal scheduler when an argument is a large binary
# that starts part-way through a byte (a sub-binary at a bit offset), which
# the VM copies when a NIF reads it.
#
#   MIX_ENV=prod mix run scripts/bit_offset_hold.exs [megabytes, default 100]
#
# Each call runs in a fresh process that already holds its input; a system
# monitor ({:long_schedule, 1}) reports every time slice of that process
# longer than 1 ms. The public functions send such a call to its
# `_dirty` NIF (OpenAgentsPolicy.Scheduler); the bare normal-scheduler NIF, called
# directly, shows what the copy costs where it is not moved.
alias OpenAgents.Delegations.Target
alias OpenAgents.Transparency.{Ladder, WorkDisclosure}
alias OpenAgentsPolicy.Native

megabytes = System.argv() |> List.first("100") |> String.to_integer()
n = megabytes * 1_000_000
# The length travels in the binary, so the size names a variable of the same
# match (one bound outside it wants a pin on Elixir 1.20, which 1.14 refuses).
<<len::32, _::1, big::binary-size(len), _::7>> = <<n::32, :binary.copy(<<0>>, n + 1)::binary>>
# The host's structs as the library recognises them (by name; no host here).
link = %{
  __struct__: OpenAgents.Transparency.ArtifactLink,
  account_id: "a",
  tier: "ledger",
  revoked_at: nil
}

machine = %{__struct__: OpenAgents.Machines.Machine, status: big, revoked_at: nil}

calls = [
  {"bare Native.fields_at/3 (normal scheduler)", fn -> Native.fields_at(:attempt, big, nil) end},
  {"WorkDisclosure.fields_at/2, tier", fn -> WorkDisclosure.fields_at(:attempt, big) end},
  {"WorkDisclosure.project/3, tier", fn -> WorkDisclosure.project(:attempt, %{}, big) end},
  {"WorkDisclosure.effective_tier/2, tier column",
   fn -> WorkDisclosure.effective_tier(%{transparency_tier: big}, %{tier: :pulse}) end},
  {"WorkDisclosure.effective_tier/2, viewer's account",
   fn ->
     WorkDisclosure.effective_tier(%{artifact_link: link}, %{account_id: big, tier: :pulse})
   end},
  {"WorkDisclosure.effective_tier/2, link's owner",
   fn ->
     WorkDisclosure.effective_tier(%{artifact_link: %{link | account_id: big}}, %{tier: :pulse})
   end},
  {"WorkDisclosure.link_for_attempt/3, principal type",
   fn -> WorkDisclosure.link_for_attempt(%{id: "r"}, %{"type" => big, "id" => "x"}) end},
  {"Ladder.name/1", fn -> Ladder.name(big) end},
  {"Ladder.allows?/3", fn -> Ladder.allows?(big, :metadata, %{tier: big}) end},
  {"Target.computer_lifecycle/2, status", fn -> Target.computer_lifecycle(machine, true) end}
]

:erlang.system_monitor(self(), [{:long_schedule, 1}])

IO.puts(
  "a #{megabytes} MB binary at a bit offset of 1; longest time slice of the calling process"
)

for {name, call} <- calls do
  parent = self()
  {pid, ref} = spawn_monitor(fn -> send(parent, {:answer, call.()}) end)

  receive do
    {:answer, _} -> :ok
  end

  receive do
    {:DOWN, ^ref, _, _, _} -> :ok
  end

  slices =
    Stream.repeatedly(fn ->
      receive do
        {:monitor, ^pid, :long_schedule, info} -> info[:timeout]
      after
        100 -> nil
      end
    end)
    |> Enum.take_while(& &1)

  longest = if slices == [], do: "under 1 ms", else: "#{Enum.max(slices)} ms"
  IO.puts("  #{String.pad_trailing(name, 52)} #{longest}")
end
