#!/usr/bin/env bash
# Build speed of the NIF:
#   (a) a cold `cargo build --release -p openagents_policy_nif`, in a fresh
#       CARGO_TARGET_DIR under /tmp (dependencies compiled from scratch; their
#       sources come from the local cargo registry cache);
#   (b) a no-op `mix compile`, proven not to run cargo: a fake `cargo` that
#       exits 1 (and leaves a mark) is first on PATH.
#
#     bash bench/build.sh
#
# Environment: MIX_BUILD_ROOT (default /tmp/build_bench), MIX_ENV (default
# prod), NOOP_RUNS (default 5), SKIP_COLD=1 to skip (a).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export MIX_BUILD_ROOT="${MIX_BUILD_ROOT:-/tmp/build_bench}"
export MIX_ENV="${MIX_ENV:-prod}"
noop_runs="${NOOP_RUNS:-5}"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "openagents_policy build speed"
echo "$(cargo --version), $(nproc) cores, MIX_ENV=$MIX_ENV, MIX_BUILD_ROOT=$MIX_BUILD_ROOT"
echo "revision $(git rev-parse --short HEAD 2>/dev/null || echo '?'), uncommitted in lib/native: $(git status --porcelain -- lib native Cargo.toml Cargo.lock mix.exs 2>/dev/null | wc -l)"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

# ── (a) cold cargo build ────────────────────────────────────────────────
if [[ "${SKIP_COLD:-0}" != 1 ]]; then
  target="$(mktemp -d /tmp/bench_cold_target.XXXXXX)"
  log="$target.log"
  echo "(a) cold build: CARGO_TARGET_DIR=$target cargo build --release --locked -p openagents_policy_nif"
  t0=$(now)
  if CARGO_TARGET_DIR="$target" cargo build --release --locked -p openagents_policy_nif >"$log" 2>&1; then
    t1=$(now)
    crates=$(grep -c '^ *Compiling ' "$log" || true)
    echo "    ok: $(secs "$t0" "$t1") s wall, $crates crates compiled (log: $log)"
    ls -l "$target/release/libopenagents_policy_nif.so" | awk '{ printf "    library: %s bytes\n", $5 }'
  else
    echo "    FAILED after $(secs "$t0" "$(now)") s; last lines of $log:"
    tail -20 "$log" | sed 's/^/      /'
  fi
  rm -rf "$target"
  echo "    load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
fi

# ── (b) no-op mix compile ───────────────────────────────────────────────
echo "(b) no-op mix compile"
echo "    bringing the build up to date first (real cargo): mix compile"
if ! mix compile >/tmp/bench_build_prepare.log 2>&1; then
  echo "    FAILED to prepare; see /tmp/bench_build_prepare.log"
  tail -20 /tmp/bench_build_prepare.log | sed 's/^/      /'
  exit 1
fi

fake="$(mktemp -d /tmp/bench_fake_cargo.XXXXXX)"
cat >"$fake/cargo" <<EOF
#!/bin/sh
echo "fake cargo invoked: \$*" >&2
touch "$fake/invoked"
exit 1
EOF
chmod +x "$fake/cargo"
resolved="$(PATH="$fake:$PATH" command -v cargo)"
echo "    fake cargo first on PATH: $resolved"
if [[ "$resolved" != "$fake/cargo" ]]; then
  echo "    the fake cargo is not what PATH resolves; cannot prove anything"
  exit 1
fi
# The fake must really fail, or its absence from the logs proves nothing.
if PATH="$fake:$PATH" cargo --version >/dev/null 2>&1; then
  echo "    the fake cargo did not fail"; exit 1
fi
rm -f "$fake/invoked"

# Positive control: where a build IS needed (an empty build root), the same
# command must reach the fake cargo and fail, or the no-op runs below prove
# nothing.
probe="$(mktemp -d /tmp/bench_build_probe.XXXXXX)"
if PATH="$fake:$PATH" MIX_BUILD_ROOT="$probe" mix compile >"$probe.log" 2>&1; then
  echo "    control FAILED: mix compile in an empty build root succeeded without cargo"
elif [[ -e "$fake/invoked" ]]; then
  echo "    control ok: in an empty build root, mix compile ran the fake cargo and failed"
else
  echo "    control inconclusive: mix compile failed without running cargo (see $probe.log)"
fi
rm -rf "$probe" "$probe.log" "$fake/invoked"

times=()
status=ok
for i in $(seq 1 "$noop_runs"); do
  t0=$(now)
  if ! out="$(PATH="$fake:$PATH" mix compile 2>&1)"; then
    status="FAILED (run $i exited non-zero)"
    echo "$out" | tail -10 | sed 's/^/      /'
  fi
  t1=$(now)
  s=$(secs "$t0" "$t1")
  times+=("$s")
  printf '    run %d: %s s%s\n' "$i" "$s" "$( [[ -n "$out" ]] && printf ', printed: %s' "$(echo "$out" | head -3 | tr '\n' ' ')" )"
done
if [[ -e "$fake/invoked" ]]; then
  status="FAILED: mix compile invoked cargo"
fi
echo "    no-op mix compile: median $(printf '%s\n' "${times[@]}" | median) s over $noop_runs runs; cargo invoked: $([[ -e "$fake/invoked" ]] && echo yes || echo no); $status"

# For scale: starting the VM and Mix at all.
t0=$(now)
mix help compile >/dev/null 2>&1 || true
t1=$(now)
echo "    for scale, \`mix help compile\` (VM + Mix start, no compile): $(secs "$t0" "$t1") s"
rm -rf "$fake"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
