#!/usr/bin/env bash
# Proves the library drops into a real Phoenix + Ecto + PostgreSQL host and
# ships in its release:
#   (a) from a clean state, compile examples/host_app (tests included) with
#       --warnings-as-errors and run its suite against PostgreSQL; the
#       library comes by `path:` from a checkout (no checksum file), so
#       rustler builds its NIF from source with cargo;
#   (b) (not with the argument `suite`) build its prod release, copy it
#       outside the repository, create and migrate a database with
#       `bin/host_app eval`, seed it, start the release as a daemon and read
#       a page and post an attempt with curl.
# (A release built with no Rust, from the precompiled artifacts, is
# scripts/precompiled_check.sh.)
# DATABASE_URL names the PostgreSQL server (and the database: the suite
# appends _test, the releases _release); unset, postgres.sh starts one,
# which is stopped at exit (a server already running is left alone).
# HOST_CHECK_PORT is the port the daemons listen on (default 4791). Whatever
# it starts is stopped at exit, failure and TERM included (lib/drill.sh).
# Run from anywhere: paths are relative to the repository root.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/drill.sh"
ROOT="$(cd "$DRILLS/../.." && pwd)"
APP="$ROOT/examples/host_app"
# The NIF library's name, as a glob: rustler names it libopenagents_policy_nif.so
# up to 0.36 and openagents_policy_nif.so from 0.37 (the newer toolchains'
# lanes), rustler_precompiled after its artifact.
NIF='*openagents_policy_nif*.so'
PORT=${HOST_CHECK_PORT:-4791}
DAEMON=""
drill_begin release_check
# A node name of its own: several checks may run on one machine.
export RELEASE_NODE="host_check_$$_$RANDOM" RELEASE_COOKIE="release_check_$$_$RANDOM"

drill_stop() { [[ -z $DAEMON ]] || "$DAEMON" stop >/dev/null 2>&1; }
trap 'printf "\nFAIL: line %s: %s\n" "$LINENO" "$BASH_COMMAND" >&2' ERR

: "${DATABASE_URL:=$("$DRILLS/postgres.sh" start)}"
export DATABASE_URL
drill_point postgres

START=$SECONDS
section_start=$SECONDS
section() {
  printf '\n==== %s ====\n' "$*"
  section_start=$SECONDS
}
done_section() { printf -- '---- ok (%ds)\n' "$((SECONDS - section_start))"; }
fail() {
  printf '\nFAIL: %s\n' "$*" >&2
  exit 1
}

# The one NIF a release carries.
release_nif() {
  # shellcheck disable=SC2206 # $NIF is a glob
  local found=("$1"/lib/openagents_policy-*/priv/native/$NIF)
  [[ ${#found[@]} -eq 1 && -f ${found[0]} ]] ||
    fail "expected exactly one $NIF in the release, found: ${found[*]}"
  echo "${found[0]}"
}

# request METHOD PATH [HANDLE] [BODY]: sets STATUS and BODY (raw bytes in $WORK/body).
request() {
  local method=$1 path=$2 handle=${3:-} body=${4:-}
  local args=(-s -o "$WORK/body" -w '%{http_code}' -X "$method")
  [[ -n $handle ]] && args+=(-H "authorization: Bearer $handle")
  [[ -n $body ]] && args+=(-H 'content-type: application/json' --data-binary "$body")
  STATUS=$(curl "${args[@]}" "http://127.0.0.1:$PORT$path")
  BODY=$(cat "$WORK/body")
  ! grep -q SECRET "$WORK/body" || fail "$method $path as ${handle:-anonymous}: the body carries SECRET"
}

expect() { # expect STATUS WHAT
  [[ $STATUS == "$1" ]] || fail "$2: status $STATUS, expected $1: $BODY"
  echo "  $STATUS $2"
}

# The values of one key, in the order they appear in the last body.
values() { grep -o "\"$1\":\"[^\"]*\"" <<<"$BODY" | cut -d'"' -f4 | paste -sd' ' -; }

# check_release LABEL: a copy of the release outside the repository, on a
# fresh database, migrates, seeds and serves.
check_release() {
  local label=$1 rel="$APP/_build/prod/rel/host_app" copy="$WORK/rel-$1"
  local shipped
  shipped=$(release_nif "$rel")
  echo "  the release carries ${shipped#"$rel"/}"
  rm -rf "$copy"
  cp -a "$rel" "$copy"
  local bin="$copy/bin/host_app"
  # The release's own database on the same server, made afresh.
  local db_url
  db_url="${DATABASE_URL%/*}/$(basename "${DATABASE_URL%%\?*}")_release"
  rel() { (cd "$copy" && DATABASE_URL="$db_url" PORT="$PORT" PHX_SERVER=true "$bin" "$@"); }

  rel eval 'Application.load(:host_app); OpenAgents.Repo.__adapter__().storage_down(OpenAgents.Repo.config())' >/dev/null
  rel eval 'HostApp.Release.migrate()' || fail "$label: migrations failed"
  rel eval 'HostApp.Release.seed()' || fail "$label: seeding failed"
  # Our daemon must be the one answering: nothing may hold the port before it.
  drill_port_free "$PORT" HOST_CHECK_PORT
  rel daemon
  DAEMON=$bin
  for _ in $(seq 1 60); do
    curl -s -o /dev/null "http://127.0.0.1:$PORT/api/targets" && break
    sleep 0.5
  done
  drill_point release

  # A smoke test of the shipped release: every route for every reader is
  # checked against the library's own answers by the fault runs' load
  # (faults/run.sh), on this same prod release.
  local path=/api/repositories/acme-widgets/attempts
  request GET "$path" member
  expect 200 "GET $path as member: $(values tier)"
  [[ -n $(values tier) ]] || fail "the seeded page is empty: $BODY"
  request POST "$path" owner '{"issue_number": 1, "target_kind": "box"}'
  expect 403 "POST $path as owner (not a member)"
  request POST "$path" member '{"issue_number": 1, "target_kind": "box"}'
  expect 201 "POST $path as member"

  "$bin" stop >/dev/null
  DAEMON=""
}

section "setup: clean examples/host_app ($APP)"
echo "elixir: $(elixir --version | tail -1)"
echo "cargo:  $(cargo --version)"
echo "database server: ${DATABASE_URL%/*}"
rm -rf "$APP/_build" "$APP/deps"
done_section

section "(a) compile host_app with its tests (--warnings-as-errors) and run its suite"
cd "$APP"
"$ROOT/scripts/ensure_deps.sh" "$APP"
mix format --check-formatted
MIX_ENV="test" mix compile --warnings-as-errors 2>&1 | tee "$WORK/compile.log"
# A checkout: rustler built the NIF (no artifact was fetched).
grep -q 'Compiling crate openagents_policy_nif in release mode' "$WORK/compile.log" ||
  fail "the library's NIF was not built from source by rustler"
mix test --warnings-as-errors
done_section
if [[ ${1:-} == suite ]]; then
  printf '\n==== release_check suite: passed in %ds ====\n' "$((SECONDS - START))"
  exit 0
fi

section "(b) prod release built with cargo: migrated, seeded, daemon, a page and a POST over curl"
MIX_ENV=prod mix release --overwrite --quiet
# shellcheck disable=SC2086 # $NIF is a glob
cmp -s "$(release_nif "$APP/_build/prod/rel/host_app")" "$(ls "$APP"/_build/prod/lib/openagents_policy/priv/native/$NIF)" ||
  fail "the release's NIF differs from the one the build installed"
check_release cargo
# A host's prod build compiles the product only: the docs tooling (dev/) is
# not in the package's compile path.
tooling=$(find "$APP/_build/prod/lib/openagents_policy/ebin" -printf '%f\n' |
  grep -E 'Pictures|Report|Mix\.Tasks\.OpenagentsPolicy\.(Show|Pictures)' || true)
[[ -z $tooling ]] || fail "the host's prod build compiled docs tooling: $tooling"
echo "  the prod build holds no Pictures, Report or docs task module"
done_section

printf '\n==== release_check: all passed in %ds ====\n' "$((SECONDS - START))"
