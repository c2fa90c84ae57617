# A panic inside a decision, at the library's own boundary. Run by
# scripts/panic_check.sh in a VM whose openagents_policy carries the NIF
# built with the core's test-only `panic_probe` feature (probe_nif.sh), with
# the VM's stderr in a file the shell then reads.
#
# First, the modules that build tables from the core while they compile are
# compiled again here, against the probe library: the probe word never
# reaches the core while a module compiles, or this would panic.
#
# Then, while 8 processes keep calling the library, others ask the decision
# that panics (reading the tier word of a record with no link, as the host's
# attempts pages do), again and again. Each panic must come back to its
# caller as an ErlangError whose original is :nif_panicked, carrying nothing
# of the panic's message; every other call must answer exactly as before the
# first panic; the VM must stay up. Prints one line of counts; exits 1 on any
# failure.
alias OpenAgents.Delegations.Target
alias OpenAgents.Transparency.{Ladder, WorkDisclosure}

# The core's ladder::PANIC_PROBE and ladder::PANIC_PROBE_MESSAGE.
probe = "panic_probe"
marker = "PANIC-PROBE-FIRED"

lib = Path.expand("../lib/openagents", __DIR__)
compiled = Path.wildcard(Path.join(lib, "**/*.ex"))
Code.put_compiler_option(:ignore_module_conflict, true)
modules = Enum.flat_map(compiled, &(Code.compile_file(&1) |> Enum.map(fn {m, _} -> m end)))

IO.puts(
  "panic probe (library): #{length(modules)} modules compiled against the probe library " <>
    "(#{Enum.map_join(modules, ", ", &inspect/1)})"
)

panics = String.to_integer(System.get_env("PANICS", "50"))
callers = 8

# Calls across the three modules, and their answers before any panic.
# (The NIF answers the record, ladder and projection calls at run time; the
# Target ones come from compiled tables.)
calls = [
  fn -> Target.job_lifecycle("running") end,
  fn -> Target.delegation_seam("queued") end,
  fn -> Target.seam("box", "active", true) end,
  fn -> WorkDisclosure.effective_tier(%{transparency_tier: "glass"}, %{tier: :ledger}) end,
  fn -> WorkDisclosure.effective_tier(%{transparency_tier: "panic_probe "}, nil) end,
  fn -> WorkDisclosure.effective_tier(%{transparency_tier: "pulse"}, %{admin: true}) end,
  fn -> WorkDisclosure.fields_at(:attempt, %{account_id: "a", tier: "ledger"}) end,
  fn ->
    WorkDisclosure.project(:trace, %{id: 1, document: "SECRET", digest: "d"}, %{tier: "pulse"})
  end,
  fn -> Ladder.name("ledger") end,
  fn -> Ladder.clamp("glass", :pulse) end
]

before = Enum.map(calls, & &1.())

fire = fn ->
  try do
    {:answered, WorkDisclosure.effective_tier(%{transparency_tier: probe}, %{tier: :ledger})}
  rescue
    error in ErlangError -> {:raised, error}
  end
end

check_panic = fn
  {:raised, %ErlangError{original: :nif_panicked} = error} ->
    if String.contains?(Exception.message(error) <> inspect(error), marker),
      do: {:error, "the panic's message reached the caller: #{inspect(error)}"},
      else: :ok

  other ->
    {:error, "expected ErlangError :nif_panicked from the probe, got #{inspect(other)}"}
end

vm_before = System.pid()
stop = :atomics.new(1, [])

workers =
  for _ <- 1..callers do
    Task.async(fn ->
      # A yield after each round, so that the panicking callers are not
      # kept waiting behind full time slices on a busy machine.
      Stream.repeatedly(fn -> Enum.map(calls, & &1.()) |> tap(fn _ -> :erlang.yield() end) end)
      |> Enum.reduce_while({0, 0}, fn answers, {count, wrong} ->
        wrong = if answers == before, do: wrong, else: wrong + 1

        if :atomics.get(stop, 1) == 1,
          do: {:halt, {count + 1, wrong}},
          else: {:cont, {count + 1, wrong}}
      end)
    end)
  end

results = for _ <- 1..panics, do: check_panic.(fire.())

:atomics.put(stop, 1, 1)

{rounds, wrong} =
  workers
  |> Task.await_many(60_000)
  |> Enum.reduce({0, 0}, fn {c, w}, {cs, ws} -> {cs + c, ws + w} end)

failures = Enum.uniq(for {:error, why} <- results, do: why)
after_ok = Enum.map(calls, & &1.()) == before

IO.puts(
  "panic probe (library): #{panics} panics, #{Enum.count(results, &(&1 == :ok))} raised " <>
    "ErlangError :nif_panicked without the message; #{rounds * length(calls)} concurrent " <>
    "calls, #{wrong} rounds with a different answer; answers after: " <>
    if(after_ok, do: "unchanged", else: "CHANGED") <> "; VM #{vm_before} still up"
)

for why <- failures, do: IO.puts("  FAIL: " <> why)
if failures != [] or wrong != 0 or not after_ok or rounds < callers, do: System.halt(1)
