#!/usr/bin/env bash
# `make demo`'s NIF library: built by cargo in release mode, then put where
# rustler puts a source build (priv/native/libopenagents_policy_nif.so),
# where dev/demo/rustler_precompiled.ex loads it from. Cargo is asked where
# it wrote the library (its JSON messages name the cdylib's file), so
# CARGO_TARGET_DIR, CARGO_BUILD_TARGET_DIR, CARGO_BUILD_TARGET and a
# .cargo/config.toml all hold. Cargo's progress goes to the terminal.
set -euo pipefail
cd "$(dirname "$0")/../.."

echo "==> make demo: building the NIF library (cargo build --release -p openagents_policy_nif; a minute or two the first time)"
messages=$(cargo build --release --locked -p openagents_policy_nif --message-format=json-render-diagnostics)
library=$(grep '"reason":"compiler-artifact"' <<<"$messages" | grep '"name":"openagents_policy_nif"' |
  grep -o '"filenames":\[[^]]*\]' | grep -oE '"[^"]+\.(so|dylib)"' | tr -d '"' | head -n 1 || true)
[ -f "$library" ] || { echo "cargo named no openagents_policy_nif library it built" >&2; exit 1; }

mkdir -p priv/native
cp "$library" priv/native/libopenagents_policy_nif.so.new
mv priv/native/libopenagents_policy_nif.so.new priv/native/libopenagents_policy_nif.so
echo "==> make demo: $library installed as priv/native/libopenagents_policy_nif.so"
