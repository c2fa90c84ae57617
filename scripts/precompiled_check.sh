#!/usr/bin/env bash
# Proves the precompiled path as a host meets it, with the artifacts of dist/
# (make precompiled; built first when dist/ is missing):
#   (a) each artifact: its ELF machine, `nif_init` exported, the highest
#       GLIBC_ version it needs (at most 2.28 for gnu, none for musl, whose
#       library must link musl's libc.so); the two macOS ones, which cannot
#       run here, by their structure (scripts/macho_check.exs: CPU type,
#       `_nif_init` exported, libSystem the only dylib and the only source
#       of undefined symbols but enif_*, the minimum macOS the build chose);
#   (b) dist/ served over HTTP from 127.0.0.1 (OTP's own httpd), a copy of the
#       package (only the files package/0 lists, with dist/'s checksum file)
#       and examples/host_app laid in it, compiled from a clean _build with no
#       cargo, rustc or C compiler on PATH; the time of the library's cold
#       compile is printed; then the host's suite runs against that library;
#       then the host's production release is built the way a Dockerfile
#       builds it (MIX_ENV=prod mix release, still no Rust), and asked for an
#       answer: the artifact it took, the VM's NIF version and OTP release,
#       and the release's build time are printed (run in the testing root,
#       that is the app's own stack: Elixir 1.20, OTP 29, NIF 2.15 artifacts);
#   (c) the refusals (a digest that differs, an artifact the checksum file
#       does not list, a tampered cache and download, a 404, an unknown
#       target) are the same code whatever the artifact, so they are proven
#       once, by test/openagents_policy/precompiled_test.exs in mix test;
#   (d) with PRECOMPILED_ARM64=1 (root only): the aarch64-gnu artifact loaded
#       by a real arm64 Erlang (a Debian arm64 root under qemu-user, made once
#       by scripts/arm64_root.sh and kept under /tmp), every NIF's answers
#       compared with the x86_64-gnu artifact's, line by line.
# DATABASE_URL names the PostgreSQL server for the host's suite (unset:
# examples/host_app/scripts/postgres.sh starts one). PRECOMPILED_CHECK_PORT: the HTTP port
# (default 4793).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DIST="$ROOT/dist"
CHECKSUMS=checksum-Elixir.OpenAgentsPolicy.Native.exs
PORT=${PRECOMPILED_CHECK_PORT:-4793}
WORK="$(mktemp -d "${TMPDIR:-/tmp}/precompiled_check.XXXXXX")"
SERVER=""
cleanup() {
  if [[ -n $SERVER ]]; then kill "$SERVER" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'printf "\nFAIL: line %s: %s\n" "$LINENO" "$BASH_COMMAND" >&2' ERR
fail() { echo "FAIL: $*" >&2; exit 1; }
START=$SECONDS

[[ -f $DIST/$CHECKSUMS ]] || scripts/precompiled_build.sh
VERSION="$(sed -nE 's/^ *@version "([^"]+)".*/\1/p' mix.exs)"
lib_of() { echo "libopenagents_policy_nif-v$VERSION-nif-2.15-$1.so"; }

echo "== (a) the artifacts"
mkdir -p "$WORK/lib"
# The minimum macOS the build chose (scripts/precompiled_build.sh).
MACOS_FLOOR="$(sed -nE 's/^MACOS_FLOOR=([0-9.]+)$/\1/p' scripts/precompiled_build.sh)"
macos=0
for tar in "$DIST"/*.tar.gz; do
  name="$(basename "$tar" .tar.gz)"
  triple="${name#*-nif-2.15-}"
  triple="${triple%.so}"
  [[ "$(tar -tzf "$tar")" == "$name" ]] || fail "$tar must hold the one file $name"
  tar -xzf "$tar" -C "$WORK/lib"
  so="$WORK/lib/$name"
  if [[ $triple == *-apple-darwin ]]; then
    # No machine here runs macOS: the structure is all that can be checked.
    case "$triple" in x86_64-*) cpu=x86_64 ;; aarch64-*) cpu=arm64 ;; esac
    summary="$(elixir scripts/macho_check.exs "$so" "$cpu" "$MACOS_FLOOR")" || fail "$name is not a macOS $MACOS_FLOOR NIF library for $cpu"
    printf '  %-45s %7d bytes (.tar.gz %6d), needs macOS %s\n' "$triple" "$(stat -c %s "$so")" "$(stat -c %s "$tar")" "$MACOS_FLOOR"
    echo "    $summary"
    macos=$((macos + 1))
    continue
  fi
  case "$triple" in x86_64-*) machine="X86-64" ;; aarch64-*) machine="AArch64" ;; *) fail "unknown triple $triple" ;; esac
  readelf -h "$so" | grep -q "Machine: *.*$machine" || fail "$name is not an $machine library"
  objdump -T "$so" | grep -qE '\bnif_init$' || fail "$name does not export nif_init"
  glibc="$(objdump -T "$so" | grep -oE 'GLIBC_[0-9.]+' | sort -Vu | tail -1 || true)"
  case "$triple" in
    *-musl)
      [[ -z $glibc ]] || fail "$name is a glibc library under a musl name ($glibc)"
      readelf -d "$so" | grep -q 'Shared library: \[libc.so\]' || fail "$name does not link musl's libc.so" ;;
    *-gnu)
      [[ "$(printf '%s\n2.28\n' "${glibc#GLIBC_}" | sort -V | tail -1)" == 2.28 ]] || fail "$name needs $glibc" ;;
  esac
  printf '  %-45s %7d bytes (.tar.gz %6d), needs %s\n' "$triple" "$(stat -c %s "$so")" "$(stat -c %s "$tar")" "${glibc:-no glibc}"
done
[[ $macos == 2 ]] || fail "dist/ holds $macos macOS artifacts, not the 2 make precompiled builds (aarch64 and x86_64)"

echo "== (b) a host with no Rust, from artifacts served on 127.0.0.1:$PORT"
# The server's root: dist/ as it is, and a tampered copy of it.
mkdir -p "$WORK/www/tampered"
ln -s "$DIST" "$WORK/www/dist"
for tar in "$DIST"/*.tar.gz; do
  { cat "$tar"; printf 'tampered'; } >"$WORK/www/tampered/$(basename "$tar")"
done
erl -noshell -eval "
  {ok, _} = application:ensure_all_started(inets),
  {ok, _} = inets:start(httpd, [{port, $PORT}, {bind_address, {127,0,0,1}},
    {server_name, \"localhost\"}, {server_root, \"$WORK/www\"}, {document_root, \"$WORK/www\"}]),
  receive stop -> ok end." >/dev/null 2>&1 &
SERVER=$!
for _ in $(seq 50); do
  erl -noshell -eval "{ok, _} = application:ensure_all_started(inets),
    case httpc:request(\"http://127.0.0.1:$PORT/dist/$CHECKSUMS\") of
      {ok, {{_, 200, _}, _, _}} -> halt(0); _ -> halt(1) end." 2>/dev/null && break
  sleep 0.2
done

# The package as Hex unpacks it: package/0's files, the checksum file among them.
PKG="$WORK/package"
mkdir -p "$PKG"
files="$(MIX_ENV=test mix run --no-compile --no-start --no-deps-check \
  -e 'IO.puts(Enum.join(Mix.Project.config()[:package][:files], "\n"))')"
cp "$DIST/$CHECKSUMS" "$WORK/$CHECKSUMS"
while read -r entry; do
  for path in $entry; do
    if [[ $path == "$CHECKSUMS" ]]; then cp "$WORK/$CHECKSUMS" "$PKG/"; continue; fi
    [[ -e $path ]] || continue
    mkdir -p "$PKG/$(dirname "$path")"
    cp -a "$path" "$PKG/$(dirname "$path")/"
  done
done <<<"$files"
[[ -f $PKG/$CHECKSUMS ]] || fail "package/0's files do not list $CHECKSUMS"
rm -rf "$PKG"/native/*/target
# The example host, at the path it has in the repository, so its path
# dependency ("../..") is the package copy.
mkdir -p "$PKG/examples"
cp -a examples/host_app "$PKG/examples/"
rm -rf "$PKG/examples/host_app/_build" "$PKG/examples/host_app/deps"
# The offline-mirror helper is not a package file (the library's package
# never runs it), but this machine has no Hex: with HEX_VENDOR_DIR set, the
# host's mix.exs takes its dependencies from the mirror through it, as in the
# repository (it looks for ../../dev/vendor.exs).
if [[ -n ${HEX_VENDOR_DIR:-} ]]; then
  mkdir -p "$PKG/dev"
  cp dev/vendor.exs "$PKG/dev/"
fi
# The host's tests compile nothing from the library's test/ (they compare
# what the host serves with the library's public API), so the package and
# the host are all there is.
HOST="$PKG/examples/host_app"

# PATH without compilers, linkers or Rust: links to everything else.
BIN="$WORK/bin"
mkdir -p "$BIN"
IFS=: read -ra dirs <<<"$PATH"
for ((i = ${#dirs[@]} - 1; i >= 0; i--)); do
  [[ -d ${dirs[i]} ]] || continue
  for program in "${dirs[i]}"/*; do
    base="$(basename "$program")"
    [[ $base =~ ^(cargo.*|rustc|rustup|rustdoc|cc|c\+\+|gcc.*|g\+\+.*|clang.*|ld(\..*)?|zig|.*-(gcc|cc|ld)(-.*)?)$ ]] && continue
    ln -sfn "$program" "$BIN/$base"
  done
done
for tool in cargo rustc cc gcc ld; do
  [[ ! -e $BIN/$tool ]] || fail "$tool is still on the check's PATH"
done

: "${DATABASE_URL:=$("$ROOT/examples/host_app/scripts/postgres.sh" start)}"
export DATABASE_URL
host() { # host ENV... -- CMD...: runs CMD in the host with no Rust, from this check's cache
  local env=()
  while [[ $1 != -- ]]; do env+=("$1"); shift; done
  shift
  (cd "$HOST" && env -u OPENAGENTS_POLICY_NIF_PATH -u OPENAGENTS_POLICY_BUILD \
    -u RUSTLER_PRECOMPILED_FORCE_BUILD_ALL -u CARGO_TARGET_DIR -u MIX_BUILD_ROOT -u MIX_BUILD_PATH \
    PATH="$BIN" MIX_ENV=test OPENAGENTS_POLICY_NIF_BASE_URL="http://127.0.0.1:$PORT/dist" \
    RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH="$WORK/cache" "${env[@]}" "$@")
}
native() { echo "$HOST/_build/test/lib/openagents_policy/priv/native"; }

# The host's other dependencies first, so that the library's compile is
# timed alone, from an empty cache (the download included).
host -- mix deps.compile >"$WORK/deps.log" 2>&1 || { cat "$WORK/deps.log"; fail "the host's dependencies do not compile"; }
rm -rf "$HOST/_build/test/lib/openagents_policy" "$WORK/cache"
t0=$(date +%s%N)
host -- mix deps.compile openagents_policy 2>&1 | tee "$WORK/compile.log"
t1=$(date +%s%N)
grep -q "Downloading http://127.0.0.1:$PORT/dist/$(lib_of x86_64-unknown-linux-gnu).tar.gz" "$WORK/compile.log" ||
  fail "the library was not fetched from the server"
[[ $(ls "$(native)") == libopenagents_policy_nif-*.so ]] || fail "no library installed"
echo "cold compile of the library, no cargo, download included: $(((t1 - t0) / 1000000)) ms"

echo "-- the host's suite, against the precompiled library"
host -- mix test 2>&1 | tail -5

echo "-- the host's production release, as a Dockerfile builds it (no cargo, rustc or cc)"
rm -rf "$WORK/cache"
r0=$SECONDS
host MIX_ENV=prod -- mix release --overwrite >"$WORK/release.log" 2>&1 ||
  { cat "$WORK/release.log"; fail "MIX_ENV=prod mix release failed with no Rust"; }
taken="$(grep -oE "Downloading http://127.0.0.1:$PORT/dist/[^ ]+" "$WORK/release.log" | sed 's|.*/||')" ||
  { cat "$WORK/release.log"; fail "the release did not fetch the precompiled library"; }
echo "  built in $((SECONDS - r0)) s (every prod dependency compiled, the library fetched)"
echo "  artifact taken: $taken"
REL="$HOST/_build/prod/rel/host_app"
shipped=("$REL"/lib/openagents_policy-*/priv/native/libopenagents_policy_nif-*.so)
[[ ${#shipped[@]} -eq 1 && -f ${shipped[0]} ]] || fail "the release carries no single NIF: ${shipped[*]}"
cmp -s "${shipped[0]}" "$WORK/lib/${taken%.tar.gz}" || fail "the release's NIF is not the artifact taken"
# shellcheck source=../examples/host_app/scripts/castle_sys_config.sh
. "$ROOT/examples/host_app/scripts/castle_sys_config.sh"
vsn="$(cut -d' ' -f2 "$REL/releases/start_erl.data")"
(export PATH="$BIN" RELEASE_NODE="precompiled_$$" RELEASE_COOKIE="precompiled_$$_$RANDOM"
  castle_sys_config "$REL" "$vsn" >/dev/null
  answer="$(cd "$REL" && bin/host_app eval '
    IO.puts("  VM: OTP #{System.otp_release()}, erts #{:erlang.system_info(:version)}, " <>
      "NIF version #{:erlang.system_info(:nif_version)}, Elixir #{System.version()}")
    IO.puts("  the release answers: clamp(:glass, pulse viewer) = " <>
      inspect(OpenAgents.Transparency.Ladder.clamp(:glass, %{tier: :pulse})) <>
      ", seam(box, active, owner) = " <>
      inspect(OpenAgents.Delegations.Target.seam("box", "active", true)))')" ||
    fail "the release did not answer"
  echo "$answer"
  grep -q 'clamp(:glass, pulse viewer) = :pulse' <<<"$answer" || fail "the release answered wrongly: $answer")

if [[ ${PRECOMPILED_ARM64:-0} == 1 ]]; then
  echo "== (d) the aarch64-gnu artifact in a real arm64 Erlang (qemu-user)"
  a0=$SECONDS
  ARM="$(scripts/arm64_root.sh)"
  mkdir -p "$WORK/answers"
  x86="$WORK/lib/$(lib_of x86_64-unknown-linux-gnu)"
  # The stub module the load check loaded the x86_64 artifact into.
  MIX_ENV=test mix run --no-compile --no-start --no-deps-check -e "
    :ok = OpenAgentsPolicy.LoadCheck.library(\"$x86\", OpenAgentsPolicy.Native,
      keep_stub: \"$WORK/answers/Elixir.OpenAgentsPolicy.Native.beam\")"
  erlc -o "$WORK/answers" scripts/nif_answers.erl
  erl -noshell -pa "$WORK/answers" -eval "nif_answers:main(\"${x86%.so}\")" >"$WORK/answers/x86_64.txt"
  inside="/tmp/nif_answers.$$"
  mkdir -p "$ARM$inside"
  cp "$WORK"/answers/*.beam "$WORK/lib/$(lib_of aarch64-unknown-linux-gnu)" "$ARM$inside/"
  arm_lib="$inside/$(lib_of aarch64-unknown-linux-gnu)"
  # One JIT mapping (+JMsingle): qemu-user does not see code written through a second one.
  chroot "$ARM" /usr/bin/erl +JMsingle true -noshell -pa "$inside" \
    -eval "nif_answers:main(\"${arm_lib%.so}\")" >"$WORK/answers/aarch64.txt"
  rm -rf "${ARM:?}$inside"
  chroot "$ARM" /usr/bin/erl +JMsingle true -noshell -eval \
    'io:format("  arm64 VM: ~s, OTP ~s~n", [erlang:system_info(system_architecture), erlang:system_info(otp_release)]), halt().'
  diff "$WORK/answers/x86_64.txt" "$WORK/answers/aarch64.txt" || fail "arm64 answers differ from x86_64's"
  echo "  $(tail -1 "$WORK/answers/aarch64.txt"), $(wc -l <"$WORK/answers/aarch64.txt") lines, identical on x86_64 and aarch64 ($((SECONDS - a0)) s)"
fi

echo "precompiled check passed in $((SECONDS - START)) s"
