#!/usr/bin/env bash
# Where the time of one call goes, down to C and Rust symbols: runs the call
# in a loop in a BEAM started with perf maps for its JIT (+JPperf true),
# samples it with `perf record`, and prints the hottest symbols.
#
#     bash bench/perf_nif.sh 'OpenAgentsPolicy.Native.ladder_rank(:glass)'
#     PERF_SETUP='src = Bench.Fixtures.attempt_source(Bench.Fixtures.attempt_record(1, Bench.Fixtures.link(1)))' \
#       bash bench/perf_nif.sh 'OpenAgentsPolicy.Native.project(:attempt, src, :ledger, nil)'
#
# PERF_SETUP is Elixir run once (the reference and bench fixtures are
# loaded); the expression is called in a compiled loop for PERF_SECONDS
# (default 6; sampled after a 3 s warm-up). The loop stops by itself, and the
# VM is killed if it has not after PERF_SECONDS + 60 s.
set -euo pipefail

expr="${1:?usage: perf_nif.sh 'Elixir expression' }"
seconds="${PERF_SECONDS:-6}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export MIX_BUILD_ROOT="${MIX_BUILD_ROOT:-/tmp/build_bench}"
export MIX_ENV="${MIX_ENV:-prod}"
work="$(mktemp -d /tmp/bench_perf.XXXXXX)"

cat >"$work/loop.exs" <<EOF
root = "$root"
Code.require_file(Path.join(root, "../shared/reference/load.exs"))
Code.require_file(Path.join(root, "bench/support/fixtures.exs"))
Code.compile_string("""
defmodule Bench.PerfLoop do
  def run(deadline) do
    ${PERF_SETUP:-:ok}
    loop(fn -> ${expr} end, deadline)
  end

  defp loop(f, deadline) do
    burst(f, 64)
    if System.monotonic_time(:millisecond) < deadline, do: loop(f, deadline), else: :ok
  end

  defp burst(_f, 0), do: :ok
  defp burst(f, n), do: (f.(); burst(f, n - 1))
end
""")
Bench.PerfLoop.run(System.monotonic_time(:millisecond) + ($seconds + 3) * 1000)
EOF

elixir --erl "+JPperf true" -S mix run "$work/loop.exs" &
pid=$!
( sleep $((seconds + 60)); kill -KILL "$pid" 2>/dev/null || true ) &
guard=$!
sleep 3
perf record -F 4000 -g -p "$pid" -o "$work/perf.data" -- sleep "$seconds" >/dev/null 2>&1 || true
wait "$pid" || true
kill "$guard" 2>/dev/null || true
echo "perf profile of: $expr"
perf report -i "$work/perf.data" --no-children --sort dso,symbol --stdio 2>/dev/null \
  | grep -E '^ +[0-9.]+%' | head -"${PERF_TOP:-25}" | sed -E 's/ +- +- +$//'
echo "(perf data: $work/perf.data; [JIT] rows are BEAM code, named from the JIT's perf map)"
