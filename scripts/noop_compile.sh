#!/usr/bin/env bash
# What a no-op `mix compile` costs, now that every compile runs cargo:
#   (a) the whole command, N times (after one compile that may build);
#   (b) starting the VM alone (`mix run --no-compile --no-start`), N times;
#   (c) `recompile()` inside a running VM, 7 times (Mix and cargo only).
# Fails if a no-op compile installs a library or compiles an Elixir file.
#
#     scripts/noop_compile.sh        (MIX_ENV, default prod; N, default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
export MIX_ENV="${MIX_ENV:-prod}"
n="${N:-5}"

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
seconds() { /usr/bin/time -f %e "$@" 2>&1 >/dev/null | tail -1; }

mix compile >/dev/null
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

for _ in $(seq "$n"); do
  out=$(mix compile 2>&1)
  if grep -qE 'Compiling|Installed' <<<"$out"; then
    echo "FAIL: a no-op compile did work:"$'\n'"$out" >&2
    exit 1
  fi
done

whole=$(for _ in $(seq "$n"); do seconds mix compile; done | median)
start=$(for _ in $(seq "$n"); do seconds mix run --no-compile --no-start -e true; done | median)
inside=$(mix run --no-start -e '
  ms = for _ <- 1..7, do: elem(:timer.tc(fn -> :noop = IEx.Helpers.recompile() end), 0) / 1000
  IO.puts(ms |> Enum.sort() |> Enum.at(3) |> round())')

echo "no-op mix compile, whole command: ${whole} s (median of $n)"
echo "starting the VM alone:            ${start} s (median of $n)"
echo "recompile() in a running VM:      ${inside} ms (median of 7)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
