#!/usr/bin/env bash
# Builds the NIF library with the core's test-only `panic_probe` feature and
# prints its path. It goes to its own directory, panic_probe/, under cargo's
# target directory (the one `cargo metadata` names, as for the NIF rustler
# builds: CARGO_TARGET_DIR, CARGO_BUILD_TARGET_DIR, .cargo/config.toml, else
# target/), so it never replaces the library that rustler builds and copies
# into priv/native.
#
#   scripts/probe_nif.sh            -> <target>/panic_probe/release/libopenagents_policy_nif.so
#   scripts/probe_nif.sh install D  also puts it in place of every regular file
#                                   *openagents_policy_nif*.so under D (a copy
#                                   of a built app or a release: rustler names
#                                   it libopenagents_policy_nif.so up to 0.36,
#                                   openagents_policy_nif.so from 0.37). A
#                                   symbolic link is never written through: a
#                                   build's priv/ links to the checkout's own
#                                   priv/, so copy it with its links followed.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

target="$(cargo metadata --format-version=1 --no-deps | sed -nE 's/.*"target_directory":"([^"]+)".*/\1/p')"
[ -n "$target" ] || { echo "probe_nif.sh: cargo metadata names no target directory" >&2; exit 1; }
dir="$target/panic_probe"
cargo build -q --locked -p openagents_policy_nif --release --features panic_probe --target-dir "$dir" >&2
probe="$dir/release/libopenagents_policy_nif.so"

if [ "${1:-}" = install ]; then
  found=0
  while IFS= read -r -d '' lib; do
    cp "$probe" "$lib"
    found=$((found + 1))
  done < <(find "$2" -type f -name '*openagents_policy_nif*.so' -print0)
  [ "$found" -gt 0 ] || { echo "probe_nif.sh: no *openagents_policy_nif*.so file under $2" >&2; exit 1; }
fi
echo "$probe"
