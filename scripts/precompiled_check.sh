#!/usr/bin/env bash
# Proves the precompiled path as a host meets it, with the artifacts of dist/
# (make precompiled; built first when dist/ is missing):
#   (a) each artifact: its ELF machine, `nif_init` exported, the highest
#       GLIBC_ version it needs (at most 2.28 for gnu, none for musl, whose
#       library must link musl's libc.so); the two macOS ones, which cannot
#       run here, by their structure (scripts/macho_check.exs: CPU type,
#       `_nif_init` exported, libSystem the only dylib and the only source
#       of undefined symbols but enif_*, the minimum macOS the build chose);
#   (b) a host with no Rust, as rustler_precompiled serves it: a copy of the
#       package (only the files package/0 lists, with dist/'s checksum file)
#       and examples/host_app laid in it (the host takes the package by
#       `path:`, and a package directory that carries the checksum file uses
#       the artifacts), every command run with no cargo, rustc, C compiler
#       or linker on PATH, RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH a directory
#       of this check's, OPENAGENTS_POLICY_NIF_BASE_URL naming dist/ served
#       over HTTP from 127.0.0.1 (OTP's own httpd, its transfer log kept):
#       (i)   the library's cold compile, download included, from an empty
#             cache, timed over PRECOMPILED_CHECK_RUNS runs (default 3;
#             minimum and median printed); the artifact fetched from the
#             server, the library installed byte for byte; then the host's
#             suite against it; a no-op `mix compile` of the host, timed as
#             the cold one; then the host's production release built
#             the way a Dockerfile builds it (MIX_ENV=prod mix release, from
#             an empty cache) and asked for an answer: the artifact it took,
#             the VM's NIF version and OTP release, and the release's build
#             time are printed (run in the testing root, that is the app's
#             own stack: Elixir 1.20, OTP 29, NIF 2.15 artifacts);
#       (iii) tampered artifacts (each library with bytes appended, packed
#             again under its own name: a valid archive of a loadable
#             library, so only the checksum can refuse it) are refused, from
#             the server (the `tampered/` directory it serves) and from the
#             cache (a tampered entry, the server holding the good one):
#             the compile fails on the checksum, and nothing is installed in
#             priv/native;
#       (ii)  then, the server stopped (its port refuses connections), the
#             library's cold compile offline from a cache pre-filled with
#             dist/'s archives, as an offline machine fills it, timed as (i).
#       rustler_precompiled's own refusals (a target or NIF version the
#       checksum file does not list, a download that fails) are its code,
#       the same whatever the artifact, and not retested here;
#   (d) with PRECOMPILED_ARM64=1 (root only): the aarch64-gnu artifact loaded
#       by a real arm64 Erlang (a Debian arm64 root under qemu-user, made once
#       by scripts/arm64_root.sh and kept under /tmp), every NIF's answers
#       compared with the x86_64-gnu artifact's, line by line.
# DATABASE_URL names the PostgreSQL server for the host's suite (unset:
# examples/drills/postgres.sh starts one). PRECOMPILED_CHECK_PORT:
# the HTTP port (default: one the server picks, free).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DIST="$ROOT/dist"
CHECKSUMS=checksum-Elixir.OpenAgentsPolicy.Native.exs
RUNS=${PRECOMPILED_CHECK_RUNS:-3}
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

echo "== (b) a host with no Rust, from artifacts served on 127.0.0.1"
# The server's root: dist/ as it is, and tampered copies of its archives.
mkdir -p "$WORK/www/tampered" "$WORK/tamper"
ln -s "$DIST" "$WORK/www/dist"
for tar in "$DIST"/*.tar.gz; do
  name="$(basename "$tar" .tar.gz)"
  tar -xzf "$tar" -C "$WORK/tamper"
  printf 'tampered' >>"$WORK/tamper/$name"
  tar -C "$WORK/tamper" -czf "$WORK/www/tampered/$name.tar.gz" "$name"
  cmp -s "$tar" "$WORK/www/tampered/$name.tar.gz" && fail "the tampered $name.tar.gz is dist/'s"
done
ACCESS="$WORK/access.log"
touch "$ACCESS"
erl -noshell -eval "
  {ok, _} = application:ensure_all_started(inets),
  {ok, Pid} = inets:start(httpd, [{port, ${PRECOMPILED_CHECK_PORT:-0}}, {bind_address, {127,0,0,1}},
    {server_name, \"localhost\"}, {server_root, \"$WORK/www\"}, {document_root, \"$WORK/www\"},
    {transfer_log, \"$ACCESS\"}]),
  {port, Port} = lists:keyfind(port, 1, httpd:info(Pid)),
  ok = file:write_file(\"$WORK/port\", integer_to_list(Port)),
  receive stop -> ok end." >"$WORK/server.log" 2>&1 &
SERVER=$!
for _ in $(seq 100); do [[ -s $WORK/port ]] && break; sleep 0.1; done
[[ -s $WORK/port ]] || { cat "$WORK/server.log"; fail "the HTTP server did not start"; }
PORT=$(cat "$WORK/port")
BASE="http://127.0.0.1:$PORT"
curl -sf -o /dev/null "$BASE/dist/$CHECKSUMS" || fail "the server does not serve dist/"
echo "  dist/ served at $BASE/dist, tampered copies at $BASE/tampered"

# The package as Hex unpacks it: package/0's files (read from mix.exs alone),
# the checksum file among them.
PKG="$WORK/package"
mkdir -p "$PKG"
files="$(elixir -e 'Mix.start(); Code.compile_file("mix.exs")
  IO.puts(Enum.join(Mix.Project.config()[:package][:files], "\n"))')"
for path in $files; do
  if [[ $path == "$CHECKSUMS" ]]; then cp "$DIST/$CHECKSUMS" "$PKG/"; continue; fi
  [[ -e $path ]] || continue
  mkdir -p "$PKG/$(dirname "$path")"
  cp -a "$path" "$PKG/$(dirname "$path")/"
done
[[ -f $PKG/$CHECKSUMS ]] || fail "package/0's files do not list $CHECKSUMS"
rm -rf "$PKG"/native/*/target
# The example host, at the path it has in the repository, so its path
# dependency ("../..") is the package copy.
mkdir -p "$PKG/examples/host_app"
tar -C examples/host_app --exclude=./_build --exclude=./deps -cf - . | tar -C "$PKG/examples/host_app" -xf -
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

: "${DATABASE_URL:=$("$ROOT/examples/drills/postgres.sh" start)}"
export DATABASE_URL
CACHE="$WORK/cache"
host() { # host [VAR=VALUE...] -- CMD...: CMD in the host with no Rust, base URL dist/, cache $CACHE
  local env=()
  while [[ $1 != -- ]]; do env+=("$1"); shift; done
  shift
  (cd "$HOST" && env -u OPENAGENTS_POLICY_BUILD -u RUSTLER_PRECOMPILED_FORCE_BUILD_ALL \
    -u CARGO_TARGET_DIR -u CARGO_BUILD_TARGET_DIR -u MIX_BUILD_ROOT -u MIX_BUILD_PATH \
    PATH="$BIN" MIX_ENV=test OPENAGENTS_POLICY_NIF_BASE_URL="$BASE/dist" \
    RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH="$CACHE" "${env[@]}" "$@")
}
LIBBUILD="$HOST/_build/test/lib/openagents_policy"
NATIVE="$LIBBUILD/priv/native"
# The package carries a priv/ (priv/decisions.json), so Mix links the
# library's priv in _build to the package's, as it does for any dependency
# with one: rustler_precompiled installs into $PKG/priv/native, and a clean
# build removes that too.
clean_build() { rm -rf "$LIBBUILD" "$PKG/priv/native" "$@"; }
HERE="$(lib_of x86_64-unknown-linux-gnu)"
installed() { compgen -G "$NATIVE/*.so" || true; }
served() { # served PATH: how many times the server answered GET PATH with a 200
  grep -c "\"GET $1 HTTP/[0-9.]*\" 200 " "$ACCESS" || true
}
ms() { echo $((($(date +%s%N) - $1) / 1000000)); }
# figures MS...: "min X ms, median Y ms (runs: ...)"
figures() {
  local sorted
  sorted=($(printf '%s\n' "$@" | sort -n))
  echo "min ${sorted[0]} ms, median ${sorted[$((${#sorted[@]} / 2))]} ms (runs: $*)"
}

# The host's other dependencies first, so that the library's compile is
# timed alone.
if ! host -- mix deps.compile >"$WORK/deps.log" 2>&1; then
  cat "$WORK/deps.log"
  grep -qE 'System\.cmd\("cargo"|Compiling crate' "$WORK/deps.log" &&
    fail "the library went for a source build in a package that carries $CHECKSUMS (does OpenAgentsPolicy.Native look for that name?)"
  fail "the host's dependencies do not compile"
fi

echo "-- (i) the library's cold compile, from an empty cache, the artifact downloaded ($RUNS runs)"
times=()
for run in $(seq "$RUNS"); do
  clean_build "$CACHE"
  before=$(served "/dist/$HERE.tar.gz")
  t0=$(date +%s%N)
  host -- mix deps.compile openagents_policy >"$WORK/compile.log" 2>&1 ||
    { cat "$WORK/compile.log"; fail "the library did not compile from the served artifacts"; }
  times+=("$(ms "$t0")")
  [[ $(served "/dist/$HERE.tar.gz") -eq $((before + 1)) ]] || fail "run $run: $HERE.tar.gz was not fetched from the server"
  [[ $(installed) == "$NATIVE/$HERE" ]] || fail "run $run: installed: $(installed)"
  cmp -s "$NATIVE/$HERE" "$WORK/lib/$HERE" || fail "run $run: the installed library is not the artifact's"
done
sed 's/^/  > /' "$WORK/compile.log"
echo "  installed $HERE, byte for byte the artifact's; nothing in its cache before each run"
echo "cold compile of the library, no Rust, download included: $(figures "${times[@]}")"

echo "-- the host's suite, against the precompiled library"
host -- mix test 2>&1 | tail -4

# What every later `mix compile` of the host pays for the library once it is
# built: Mix starting, loading each dependency's mix.exs (the library's
# among them) and finding nothing to do.
host -- mix compile >/dev/null 2>&1 || fail "the host's mix compile failed"
times=()
for _ in $(seq "$RUNS"); do
  t0=$(date +%s%N)
  host -- mix compile >"$WORK/noop.log" 2>&1 || { cat "$WORK/noop.log"; fail "the host's no-op mix compile failed"; }
  times+=("$(ms "$t0")")
  ! grep -qE '^(Compiling|Generated) ' "$WORK/noop.log" || { cat "$WORK/noop.log"; fail "the host's no-op mix compile compiled something"; }
done
echo "no-op mix compile of the host, the library built: $(figures "${times[@]}")"

echo "-- the host's production release, as a Dockerfile builds it (no cargo, rustc or cc)"
rm -rf "$CACHE"
lines=$(wc -l <"$ACCESS")
r0=$SECONDS
host MIX_ENV=prod -- mix release --overwrite >"$WORK/release.log" 2>&1 ||
  { cat "$WORK/release.log"; fail "MIX_ENV=prod mix release failed with no Rust"; }
taken="$(tail -n +$((lines + 1)) "$ACCESS" | grep -oE '"GET /dist/[^ ]+\.tar\.gz HTTP/[0-9.]+" 200 ' |
  sed -E 's|"GET /dist/([^ ]+) .*|\1|')"
[[ $taken == "$HERE.tar.gz" ]] || { cat "$WORK/release.log"; fail "the release fetched '$taken', not $HERE.tar.gz"; }
echo "  built in $((SECONDS - r0)) s (every prod dependency compiled, the library fetched)"
echo "  artifact taken: $taken"
REL="$HOST/_build/prod/rel/host_app"
shipped=("$REL"/lib/openagents_policy-*/priv/native/libopenagents_policy_nif*.so)
[[ ${#shipped[@]} -eq 1 && -f ${shipped[0]} ]] || fail "the release carries no single NIF: ${shipped[*]}"
cmp -s "${shipped[0]}" "$WORK/lib/${taken%.tar.gz}" || fail "the release's NIF is not the artifact taken"
echo "  the release carries ${shipped[0]#"$REL"/}, byte for byte the artifact's"
(export PATH="$BIN" RELEASE_NODE="precompiled_$$" RELEASE_COOKIE="precompiled_$$_$RANDOM"
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

echo "-- (iii) a tampered artifact is refused, and nothing is installed"
# refused WHAT VAR=VALUE...: the library's compile, from a clean build, fails on the checksum.
refused() {
  local what=$1
  shift
  clean_build
  if host "$@" -- mix deps.compile openagents_policy >"$WORK/refused.log" 2>&1; then
    cat "$WORK/refused.log"
    fail "$what: the library compiled"
  fi
  grep -q 'the integrity check failed because the checksum of files does not match' "$WORK/refused.log" ||
    { cat "$WORK/refused.log"; fail "$what: the compile failed, but not on the checksum"; }
  [[ -z $(installed) ]] || fail "$what: installed anyway: $(installed)"
  [[ ! -e $LIBBUILD/ebin/Elixir.OpenAgentsPolicy.Native.beam ]] || fail "$what: OpenAgentsPolicy.Native compiled anyway"
  echo "  refused: $what ($(grep -m1 -o 'Error while downloading precompiled NIF: [^.]*' "$WORK/refused.log"))"
}
rm -rf "$CACHE"
before=$(served "/tampered/$HERE.tar.gz")
refused "downloaded from $BASE/tampered" OPENAGENTS_POLICY_NIF_BASE_URL="$BASE/tampered"
[[ $(served "/tampered/$HERE.tar.gz") -eq $((before + 1)) ]] || fail "the tampered artifact was not downloaded"
# What that download left in the cache is refused again, the server holding the good one.
refused "the tampered download, now in the cache (base URL dist/)"
# A cache entry tampered in place.
rm -rf "$CACHE"
mkdir -p "$CACHE"
cp "$WORK/www/tampered/$HERE.tar.gz" "$CACHE/"
before=$(served "/dist/$HERE.tar.gz")
refused "a tampered cache entry (base URL dist/)"
[[ $(served "/dist/$HERE.tar.gz") -eq $before ]] || fail "the compile went to the server despite the cache entry"

echo "-- (ii) offline: the server stopped, the cache pre-filled with dist/'s archives ($RUNS runs)"
kill "$SERVER"
wait "$SERVER" 2>/dev/null || true
SERVER=""
! curl -s -o /dev/null "$BASE/dist/$CHECKSUMS" || fail "$BASE still answers"
times=()
for run in $(seq "$RUNS"); do
  clean_build "$CACHE"
  mkdir -p "$CACHE"
  cp "$DIST"/*.tar.gz "$CACHE/"
  t0=$(date +%s%N)
  host -- mix deps.compile openagents_policy >"$WORK/offline.log" 2>&1 ||
    { cat "$WORK/offline.log"; fail "the library did not compile offline from the cache"; }
  times+=("$(ms "$t0")")
  [[ $(installed) == "$NATIVE/$HERE" ]] || fail "run $run: installed: $(installed)"
  cmp -s "$NATIVE/$HERE" "$WORK/lib/$HERE" || fail "run $run: the installed library is not the artifact's"
done
echo "  installed $HERE from the cache, byte for byte the artifact's; $BASE refusing connections"
echo "cold compile of the library, no Rust, offline from the cache: $(figures "${times[@]}")"
host -- mix run --no-start -e '
  IO.puts("  it answers: clamp(:glass, pulse viewer) = " <>
    inspect(OpenAgents.Transparency.Ladder.clamp(:glass, %{tier: :pulse})))'

if [[ ${PRECOMPILED_ARM64:-0} == 1 ]]; then
  echo "== (d) the aarch64-gnu artifact in a real arm64 Erlang (qemu-user)"
  a0=$SECONDS
  ARM="$(scripts/arm64_root.sh)"
  mkdir -p "$WORK/answers"
  x86="$WORK/lib/$(lib_of x86_64-unknown-linux-gnu)"
  # The stub module the x86_64 artifact loads into (nif_answers:stub/3),
  # with the package's decision digest as its load data.
  erlc -o "$WORK/answers" scripts/nif_answers.erl
  digest=$(sha256sum priv/decisions.json | cut -c1-64)
  erl -noshell -pa "$WORK/answers" -eval "nif_answers:stub(\"${x86%.so}\", \"$WORK/answers\", \"$digest\")"
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
