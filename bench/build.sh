#!/usr/bin/env bash
# Build speed of the NIF:
#   (a) a cold `cargo build --release -p openagents_policy_nif`, in a fresh
#       CARGO_TARGET_DIR under /tmp (dependencies compiled from scratch; their
#       sources come from the local cargo registry cache);
#   (b) a no-op `mix compile` in a host, N times (minimum and median): the
#       example host (examples/host_app, HOST to name another), which takes
#       the library by `path:`, so every `mix compile` of the host runs the
#       library's own compile too. Nothing in the library is stale, so
#       OpenAgentsPolicy.Native is not recompiled: neither rustler (cargo) nor
#       rustler_precompiled (download, cache) runs, and a run that prints a
#       compile of anything fails the bench. What remains is Mix's own work:
#       loading the projects, checking their dependencies and manifests.
#
#     bash bench/build.sh
#
# Environment: MIX_BUILD_ROOT (the host's build, default /tmp/build_bench),
# MIX_ENV (default prod, as a release is built), N (no-op runs, default 5),
# SKIP_COLD=1 to skip (a), HOST (default examples/host_app). The host's
# dependencies come from HEX_VENDOR_DIR's mirror when it is set, else from
# Hex (scripts/ensure_deps.sh).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
host="$(cd "${HOST:-examples/host_app}" && pwd)"
export MIX_BUILD_ROOT="${MIX_BUILD_ROOT:-/tmp/build_bench}"
export MIX_ENV="${MIX_ENV:-prod}"

now() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'; }

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

# ── (b) no-op mix compile in a host ─────────────────────────────────────
echo "(b) no-op mix compile in ${host#"$root"/}, ${N:-5} runs after one that brings the build up to date"
scripts/ensure_deps.sh "$host" "$MIX_ENV" >/dev/null
log="$(mktemp /tmp/bench_host_compile.XXXXXX)"
(cd "$host" && mix compile >"$log" 2>&1) || { cat "$log"; echo "the host does not compile" >&2; exit 1; }
rm -f "$log"
times=()
for i in $(seq 1 "${N:-5}"); do
  t0=$(now)
  out="$(cd "$host" && mix compile 2>&1)"
  t1=$(now)
  if grep -qE '^(Compiling|Generated) |Compiling crate|Downloading' <<<"$out"; then
    echo "    run $i compiled something, so it was no no-op:"
    sed 's/^/      /' <<<"$out"
    exit 1
  fi
  times+=("$(secs "$t0" "$t1")")
  echo "    run $i: ${times[-1]} s"
done
sorted=($(printf '%s\n' "${times[@]}" | sort -n))
echo "    min ${sorted[0]} s, median ${sorted[$((${#sorted[@]} / 2))]} s"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
