#!/usr/bin/env bash
# precompiled_build.sh (make precompiled): builds the NIF for every published
# target and writes dist/ as rustler_precompiled lays it out:
#
#   dist/libopenagents_policy_nif-v<version>-nif-2.15-<triple>.so.tar.gz
#       one file inside: libopenagents_policy_nif-v<version>-nif-2.15-<triple>.so
#   dist/checksum-Elixir.OpenAgentsPolicy.Native.exs
#       %{"<tar.gz name>" => "sha256:<hex>", ...}, written by rustler_precompiled
#       itself (`mix rustler_precompiled.download OpenAgentsPolicy.Native --all`)
#       from dist/ served on 127.0.0.1: the last step, below. It needs the
#       Mix dependencies rustler_precompiled and rustler: from Hex, or from
#       the offline mirror HEX_VENDOR_DIR names.
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
# warns that xcrun finds no macOS SDK: zig's stubs stand in for it.) Each
# library is checked before it is packed: on Linux its ELF machine, `nif_init` exported, the highest GLIBC_
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

# The checksum file, written as rustler_precompiled writes it, from where the
# artifacts are served: dist/ over HTTP on 127.0.0.1 (OTP's httpd, on a port
# it picks), and `mix rustler_precompiled.download OpenAgentsPolicy.Native
# --all --print` with OPENAGENTS_POLICY_NIF_BASE_URL naming it. The task
# reads the module's metadata file (base URL, targets, NIF versions), which
# rustler_precompiled writes when the module compiles, so the module is
# compiled first, with that base URL:
#   - in a copy of the package (package/0's files, no checksum file: a
#     checkout, so it force-builds with rustler), not in this checkout: the
#     checkout's builds, its priv/native and its Mix envs stay as they are,
#     and nothing stale (a module compiled earlier with another base URL)
#     can be read;
#   - as :prod, the env a host compiles the library in: its dependencies are
#     only rustler_precompiled, rustler and Jason (and theirs), none of the
#     test, docs or bench ones;
#   - with RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH a directory of its own, where
#     rustler_precompiled writes that metadata file and the artifacts it
#     downloads (not the user's cache, shared by every project);
#   - cargo building into $TARGET_DIR, the cross builds' target directory.
#     This build is rustler's plain `cargo build --release` for this machine,
#     with no --target, so it shares the cross builds' build scripts and
#     proc-macros but compiles the crates once more (about 30 s, most of
#     this step). cargo keys a workspace crate's build by its path in the
#     workspace, not on disk, so a later run's copy (its files' times kept,
#     cp -a) reuses this one when the sources have not changed since.
# The task writes the file into the copy's root (the project's cwd); it goes
# to dist/, never the checkout's root: a checkout without it builds from
# source. Each checksum is then compared with dist/'s own file.
checksums=checksum-Elixir.OpenAgentsPolicy.Native.exs
echo "== $checksums, from dist/ served on 127.0.0.1" >&2
server=""
trap 'if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; fi; rm -rf "$stage"' EXIT
# Served under a path, /dist: rustler_precompiled joins each name to the base
# URL's path, and a URL with none (http://127.0.0.1:PORT) makes no valid URL.
mkdir -p "$stage/www"
ln -s "$(cd "$DIST" && pwd)" "$stage/www/dist"
erl -noshell -eval "
  {ok, _} = application:ensure_all_started(inets),
  {ok, Pid} = inets:start(httpd, [{port, 0}, {bind_address, {127,0,0,1}}, {server_name, \"localhost\"},
    {server_root, \"$stage/www\"}, {document_root, \"$stage/www\"}]),
  {port, Port} = lists:keyfind(port, 1, httpd:info(Pid)),
  ok = file:write_file(\"$stage/port\", integer_to_list(Port)),
  receive stop -> ok end." >"$stage/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do [ -s "$stage/port" ] && break; sleep 0.1; done
[ -s "$stage/port" ] || { cat "$stage/server.log" >&2; echo "the HTTP server did not start" >&2; exit 1; }
base_url="http://127.0.0.1:$(cat "$stage/port")/dist"

copy="$stage/package"
mkdir -p "$copy"
# package/0's files, read from mix.exs alone (no dependency loaded).
files="$(elixir -e 'Mix.start(); Code.compile_file("mix.exs")
  IO.puts(Enum.join(Mix.Project.config()[:package][:files], "\n"))')"
for path in $files; do
  # The one package file a checkout has not: what this step writes.
  [ "$path" = "$checksums" ] && continue
  [ -e "$path" ] || { echo "package/0 lists $path, which the checkout does not have" >&2; exit 1; }
  mkdir -p "$copy/$(dirname "$path")"
  cp -a "$path" "$copy/$(dirname "$path")/"
done
# The offline-mirror helper (not a package file): with HEX_VENDOR_DIR set,
# mix.exs takes the dependencies from the mirror through it; else Hex.
if [ -n "${HEX_VENDOR_DIR:-}" ]; then
  mkdir -p "$copy/dev" && cp dev/vendor.exs "$copy/dev/"
else
  scripts/ensure_deps.sh "$copy" prod >&2
fi
# A subset of the targets (PRECOMPILED_TARGETS) lists only what was built.
partial=()
[ -z "${PRECOMPILED_TARGETS:-}" ] || partial=(--ignore-unavailable)
(cd "$copy" && env -u OPENAGENTS_POLICY_BUILD -u RUSTLER_PRECOMPILED_FORCE_BUILD_ALL \
  MIX_ENV=prod OPENAGENTS_POLICY_NIF_BASE_URL="$base_url" CARGO_TARGET_DIR="$TARGET_DIR" \
  RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH="$stage/cache" \
  mix rustler_precompiled.download OpenAgentsPolicy.Native --all --print "${partial[@]}") >&2 ||
  { echo "mix rustler_precompiled.download failed" >&2; exit 1; }
cp "$copy/$checksums" "$DIST/$checksums"

# Every artifact of dist/ listed, with its own file's digest, and nothing else.
listed="$(sed -nE 's/^ *"([^"]+)" => "sha256:([0-9a-f]{64})",$/\2  \1/p' "$DIST/$checksums" | sort)"
on_disk="$(cd "$DIST" && sha256sum -- *.tar.gz | sort)"
[ "$listed" = "$on_disk" ] ||
  { diff <(echo "$listed") <(echo "$on_disk") >&2; echo "$DIST/$checksums does not match dist/'s artifacts" >&2; exit 1; }
echo "wrote $DIST/ ($(ls "$DIST" | wc -l) files: $(wc -l <<<"$listed") artifacts and $checksums)" >&2
