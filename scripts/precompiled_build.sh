#!/usr/bin/env bash
# precompiled_build.sh (make precompiled): builds the NIF for every published
# target and writes dist/ as rustler_precompiled lays it out:
#
#   dist/libopenagents_policy_nif-v<version>-nif-2.15-<triple>.so.tar.gz
#       one file inside: libopenagents_policy_nif-v<version>-nif-2.15-<triple>.so
#   dist/checksum-Elixir.OpenAgentsPolicy.Native.exs
#       %{"<tar.gz name>" => "sha256:<hex>", ...}
#
# From any x86_64 Linux, with cargo-zigbuild: the gnu libraries link against
# zig's glibc 2.28 stubs (so they need nothing newer); the musl ones against
# zig's musl (real musl libraries: `-crt-static` makes the cdylib link musl's
# libc dynamically, as a musl VM loads it); the macOS ones against zig's
# libSystem stubs, for macOS 11.0 and later (MACOS_FLOOR, passed to rustc
# and zig as MACOSX_DEPLOYMENT_TARGET; zig's default is its newest macOS).
# A macOS library is a .dylib that the VM loads under a .so name, as on
# Linux (rustler_precompiled's naming); its install name is set to
# @rpath/libopenagents_policy_nif.so, not the build machine's path. (rustc
# warns that xcrun finds no macOS SDK: zig's stubs stand in for it.) Each library is checked before it is
# packed: on Linux its ELF machine, `nif_init` exported, the highest GLIBC_
# version it needs (none at all for musl); on macOS its whole structure
# (scripts/macho_check.exs: CPU type, `_nif_init` exported, libSystem the
# only dylib and the only source of undefined symbols but the VM's enif_*,
# the minimum macOS exactly MACOS_FLOOR, the code signature's page hashes).
# The archives are reproducible (sorted, mtime 0, gzip -n), so a rebuild of
# the same sources gives the same checksums; all but the macOS ones, whose
# LC_UUID zig's linker (0.17) makes anew on every link (and with it the
# arm64 signature's first page hash): they differ in those bytes alone.
#
# Every target builds into one target directory, so the host's build
# scripts and proc-macros (syn, serde_derive, rustler_codegen) are compiled
# twice, not once per target: for x86_64-unknown-linux-gnu, the host's own
# triple, cargo links them with zig as it links that target; for the others
# with the host's linker. RUSTFLAGS reach only the target's units: with
# --target, cargo does not pass them to host units.
#
#   PRECOMPILED_TARGETS  the triples to build (default: all six below)
#   DIST                 where to write (default dist/)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

CRATE=openagents_policy_nif
NIF_VERSION=2.15
GLIBC_FLOOR=2.28
MACOS_FLOOR=11.0
TARGETS="${PRECOMPILED_TARGETS:-x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu x86_64-unknown-linux-musl aarch64-unknown-linux-musl aarch64-apple-darwin x86_64-apple-darwin}"
DIST="${DIST:-dist}"
TARGET_DIR="$PWD/target/dist"
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
pack() { # pack BUILT NAME NEEDS: dist/NAME.tar.gz, holding BUILT as NAME
  cp "$1" "$stage/$2"
  tar -C "$stage" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - "$2" |
    gzip -n -9 >"$DIST/$2.tar.gz"
  echo "$2.tar.gz: $(stat -c %s "$1") bytes (library), $(stat -c %s "$DIST/$2.tar.gz") bytes (.tar.gz), needs $3" >&2
}
for t in $TARGETS; do
  name="lib$CRATE-v$VERSION-nif-$NIF_VERSION-$t.so"
  unset MACOSX_DEPLOYMENT_TARGET
  case "$t" in
    *-linux-gnu) zig_target="$t.$GLIBC_FLOOR"; rustflags=""; built="lib$CRATE.so" ;;
    *-linux-musl) zig_target="$t"; rustflags="-C target-feature=-crt-static"; built="lib$CRATE.so" ;;
    *-apple-darwin)
      zig_target="$t"; rustflags="-C link-arg=-Wl,-install_name,@rpath/lib$CRATE.so"; built="lib$CRATE.dylib"
      export MACOSX_DEPLOYMENT_TARGET="$MACOS_FLOOR" ;;
    *) echo "unsupported target $t" >&2; exit 1 ;;
  esac
  echo "== $t" >&2
  RUSTFLAGS="$rustflags" nice cargo zigbuild --locked --release -p "$CRATE" \
    --target "$zig_target" --target-dir "$TARGET_DIR" >&2
  built="$TARGET_DIR/$t/release/$built"

  if [[ $t == *-apple-darwin ]]; then
    case "$t" in x86_64-*) cpu=x86_64 ;; aarch64-*) cpu=arm64 ;; esac
    summary="$(elixir scripts/macho_check.exs "$built" "$cpu" "$MACOS_FLOOR")" || exit 1
    echo "  $summary" >&2
    needs="macOS $MACOS_FLOOR"
    pack "$built" "$name" "$needs"
    continue
  fi

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

  pack "$built" "$name" "${glibc:-no glibc}"
done

{
  echo "%{"
  for f in $(cd "$DIST" && ls *.tar.gz | sort); do
    echo "  \"$f\" => \"sha256:$(sha256sum "$DIST/$f" | cut -d' ' -f1)\","
  done
  echo "}"
} >"$DIST/checksum-Elixir.OpenAgentsPolicy.Native.exs"
echo "wrote $DIST/ ($(ls "$DIST" | wc -l) files)" >&2
