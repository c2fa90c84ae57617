#!/usr/bin/env bash
# Builds the NIF library with the core's test-only `panic_probe` feature and
# prints its path. It goes to its own target directory (target/panic_probe),
# so it never replaces the library that `mix compile` builds and installs.
#
#   scripts/probe_nif.sh            -> .../target/panic_probe/release/libopenagents_policy_nif.so
#   scripts/probe_nif.sh install D  also puts it in place of every
#                                          libopenagents_policy_nif*.so under D
#                                          (a copy of a built app or a release)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

dir="${CARGO_TARGET_DIR:-$PWD/target}/panic_probe"
cargo build -q -p openagents_policy_nif --release --features panic_probe --target-dir "$dir" >&2
probe="$dir/release/libopenagents_policy_nif.so"

if [ "${1:-}" = install ]; then
  found=0
  while IFS= read -r -d '' lib; do
    cp "$probe" "$lib"
    found=$((found + 1))
  done < <(find "$2" -name 'libopenagents_policy_nif*.so' -print0)
  [ "$found" -gt 0 ] || { echo "probe_nif.sh: no libopenagents_policy_nif*.so under $2" >&2; exit 1; }
fi
echo "$probe"
