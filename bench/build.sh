#!/usr/bin/env bash
# Build speed of the NIF:
#   (a) a cold `cargo build --release -p openagents_policy_nif`, in a fresh
#       CARGO_TARGET_DIR under /tmp (dependencies compiled from scratch; their
#       sources come from the local cargo registry cache);
#   (b) a no-op `mix compile`, N times: cargo runs and finds nothing to do
#       (test/openagents_policy/nif_build_test.exs holds that nothing is
#       installed or recompiled).
#
#     bash bench/build.sh
#
# Environment: MIX_BUILD_ROOT (default /tmp/build_bench), MIX_ENV (default
# prod), N (no-op runs, default 5), SKIP_COLD=1 to skip (a).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export MIX_BUILD_ROOT="${MIX_BUILD_ROOT:-/tmp/build_bench}"
export MIX_ENV="${MIX_ENV:-prod}"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

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
echo "(b) no-op mix compile, ${N:-5} runs after one that brings the build up to date"
mix compile >/dev/null
for i in $(seq 1 "${N:-5}"); do
  t0=$(now)
  mix compile >/dev/null
  echo "    run $i: $(secs "$t0" "$(now)") s"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
