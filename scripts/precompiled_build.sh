#!/usr/bin/env bash
# precompiled_build.sh (make precompiled): builds the NIF for every published
# target and writes dist/ as rustler_precompiled lays it out:
#
#   dist/libopenagents_policy_nif-v<version>-nif-2.15-<triple>.so.tar.gz
#       one file inside: libopenagents_policy_nif-v<version>-nif-2.15-<triple>.so
#   dist/checksum-Elixir.OpenAgentsPolicy.Native.exs
#       %{"<tar.gz name>" => "sha256:<hex>", ...}
#
# Linux only, from any x86_64 Linux: cargo-zigbuild links against zig's
# glibc 2.28 stubs (so the gnu libraries need nothing newer) and zig's musl
# (real musl libraries: `-crt-static` makes the cdylib link musl's libc
# dynamically, as a musl VM loads it). Each library is checked before it is
# packed: its ELF machine, `nif_init` exported, the highest GLIBC_ version it
# needs (none at all for musl). The archives are reproducible (sorted, mtime
# 0, gzip -n), so a rebuild of the same sources gives the same checksums.
#
#   PRECOMPILED_TARGETS  the triples to build (default: all four below)
#   DIST                 where to write (default dist/)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

CRATE=openagents_policy_nif
NIF_VERSION=2.15
GLIBC_FLOOR=2.28
TARGETS="${PRECOMPILED_TARGETS:-x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu x86_64-unknown-linux-musl aarch64-unknown-linux-musl}"
DIST="${DIST:-dist}"
TARGET_DIR="$PWD/target/precompiled"
VERSION="$(sed -nE 's/^ *@version "([^"]+)".*/\1/p' mix.exs)"
[ -n "$VERSION" ] || { echo "no @version in mix.exs" >&2; exit 1; }

# The tools: zig and cargo-zigbuild are both on PyPI (pinned), the Rust
# standard libraries come from rustup.
if ! command -v cargo-zigbuild >/dev/null || ! python3 -m ziglang version >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check "ziglang==0.17.1" "cargo-zigbuild==0.24.1"
fi
installed="$(rustup target list --installed)"
for t in $TARGETS; do
  grep -qx "$t" <<<"$installed" || rustup target add "$t"
done

machine() { # the ELF machine a triple's library must carry, as readelf names it
  case "$1" in x86_64-*) echo "X86-64" ;; aarch64-*) echo "AArch64" ;; esac
}

rm -rf "$DIST"
mkdir -p "$DIST"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
for t in $TARGETS; do
  case "$t" in
    *-gnu) zig_target="$t.$GLIBC_FLOOR"; rustflags="" ;;
    *-musl) zig_target="$t"; rustflags="-C target-feature=-crt-static" ;;
    *) echo "unsupported target $t" >&2; exit 1 ;;
  esac
  echo "== $t" >&2
  RUSTFLAGS="$rustflags" nice cargo zigbuild --locked --release -p "$CRATE" \
    --target "$zig_target" --target-dir "$TARGET_DIR/$t" >&2
  built="$TARGET_DIR/$t/$t/release/lib$CRATE.so"

  [ "$(readelf -h "$built" | sed -nE 's/^ *Machine: *(.*)$/\1/p' | grep -o "$(machine "$t")")" = "$(machine "$t")" ] ||
    { echo "$built is not a $(machine "$t") library" >&2; exit 1; }
  objdump -T "$built" | grep -qE '\bnif_init$' || { echo "$built does not export nif_init" >&2; exit 1; }
  glibc="$(objdump -T "$built" | grep -oE 'GLIBC_[0-9.]+' | sort -Vu | tail -1 || true)"
  case "$t" in
    *-musl)
      [ -z "$glibc" ] || { echo "$built is a glibc library under a musl name (needs $glibc)" >&2; exit 1; }
      readelf -d "$built" | grep -q 'Shared library: \[libc.so\]' ||
        { echo "$built does not link musl's libc.so" >&2; exit 1; } ;;
    *-gnu)
      [ "$(printf '%s\n%s\n' "${glibc#GLIBC_}" "$GLIBC_FLOOR" | sort -V | tail -1)" = "$GLIBC_FLOOR" ] ||
        { echo "$built needs $glibc, above the floor GLIBC_$GLIBC_FLOOR" >&2; exit 1; } ;;
  esac

  name="lib$CRATE-v$VERSION-nif-$NIF_VERSION-$t.so"
  cp "$built" "$stage/$name"
  tar -C "$stage" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - "$name" |
    gzip -n -9 >"$DIST/$name.tar.gz"
  echo "$name.tar.gz: $(stat -c %s "$built") bytes (.so), $(stat -c %s "$DIST/$name.tar.gz") bytes (.tar.gz), needs ${glibc:-no glibc}" >&2
done

{
  echo "%{"
  for f in $(cd "$DIST" && ls *.tar.gz | sort); do
    echo "  \"$f\" => \"sha256:$(sha256sum "$DIST/$f" | cut -d' ' -f1)\","
  done
  echo "}"
} >"$DIST/checksum-Elixir.OpenAgentsPolicy.Native.exs"
echo "wrote $DIST/ ($(ls "$DIST" | wc -l) files)" >&2
