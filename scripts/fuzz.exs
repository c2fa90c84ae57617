# The fuzzer of test/openagents_policy/fuzz_test.exs, for a longer run:
#
#     mix run scripts/fuzz.exs [count] [seed]
#     mix run scripts/fuzz.exs 1000000 20260825
#
# `count` calls (default 100_000), spread round-robin over every public
# function of Delegations.Target, Transparency.WorkDisclosure and
# Transparency.Ladder, with arguments generated from `seed` (default
# 20260825). Each outcome is held to its function's invariants (see
# test/support/fuzz.ex; `make parity` holds the same generator's calls to the
# seeds). Prints the calls made, the outcomes by exception class, calls per
# second, and up to 20 broken invariants; exits 1 if there was any.
#
# The same run shows the VM's memory flat: measured after the first tenth of
# the calls (allocators, code and atom table at their steady state) and at
# the end, each after a full garbage collection: the OS's resident set
# (VmRSS, which counts the NIF's Rust allocations too), :erlang.memory/1 and
# the atom count. Exits 1 if the resident set grew by more than 16 MB or the
# atom table grew at all.
#
# Runs in any MIX_ENV: outside MIX_ENV=test, scripts/test_support.exs loads
# the host's facts, the host stand-ins and the fuzzer from test/support.

Code.require_file("test_support.exs", __DIR__)

alias OpenAgentsPolicy.Fuzz

{count, seed} =
  case System.argv() do
    [] -> {100_000, 20_260_825}
    [count] -> {String.to_integer(count), 20_260_825}
    [count, seed | _] -> {String.to_integer(count), String.to_integer(seed)}
  end

functions = Fuzz.functions()

IO.puts(
  "fuzzing #{length(functions)} functions: #{count} calls, seed #{seed}, MIX_ENV=#{Mix.env()}"
)

every = max(div(count, 10), 1)
started = System.monotonic_time()

memory = fn ->
  Enum.each(Process.list(), &:erlang.garbage_collect/1)

  [rss] =
    Regex.run(~r/VmRSS:\s+(\d+) kB/, File.read!("/proc/self/status"), capture: :all_but_first)

  %{
    rss_kb: String.to_integer(rss),
    erlang: :erlang.memory(:total),
    binary: :erlang.memory(:binary),
    atoms: :erlang.system_info(:atom_count)
  }
end

progress = fn i, acc ->
  seconds =
    System.convert_time_unit(System.monotonic_time() - started, :native, :millisecond) / 1000

  if i == every, do: Process.put(:memory_before, memory.())
  IO.puts("  #{i} calls, #{acc.failure_count} disagreements, #{Float.round(seconds, 1)} s")
end

report = Fuzz.run(count, seed, keep: 20, progress: %{every: every, fun: progress})

micros = System.convert_time_unit(System.monotonic_time() - started, :native, :microsecond)
seconds = micros / 1_000_000

IO.puts("""

calls:         #{report.calls}
time:          #{Float.round(seconds, 2)} s
calls/second:  #{round(report.calls / max(seconds, 1.0e-6))}
disagreements: #{report.failure_count}
outcomes:\
""")

report.classes
|> Enum.sort_by(fn {_, n} -> -n end)
|> Enum.each(fn {class, n} ->
  IO.puts("  #{String.pad_trailing(inspect(class), 28)} #{n}")
end)

before = Process.get(:memory_before) || memory.()
final = memory.()
IO.puts("\nmemory (after call #{every} -> after the last, each after a full GC):")

for {key, label} <- [
      rss_kb: "VmRSS kB",
      erlang: ":erlang.memory total",
      binary: "  binary",
      atoms: "atom count"
    ] do
  IO.puts(
    "  #{String.pad_trailing(label, 22)} #{before[key]} -> #{final[key]} (#{final[key] - before[key]})"
  )
end

leaked =
  cond do
    final.rss_kb - before.rss_kb > 16 * 1024 -> "the resident set grew by more than 16 MB"
    final.atoms != before.atoms -> "the atom table grew"
    true -> nil
  end

if leaked, do: IO.puts("FAIL: #{leaked}")

if report.failure_count > 0 do
  IO.puts("\ndisagreements by function, class and reason:")

  report.failure_kinds
  |> Enum.sort_by(fn {_, n} -> -n end)
  |> Enum.each(fn {{m, f, a, class, why}, n} ->
    IO.puts(
      "  #{String.pad_leading(Integer.to_string(n), 7)}  #{inspect(m)}.#{f}/#{a} " <>
        "#{inspect(class)}: #{String.slice(why, 0, 90)}"
    )
  end)

  IO.puts("\nfirst #{length(report.failures)} disagreements:\n")
  Enum.each(report.failures, &IO.puts("  " <> &1 <> "\n"))
end

if report.failure_count > 0 or leaked, do: System.halt(1)
