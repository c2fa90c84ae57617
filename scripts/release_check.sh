#!/usr/bin/env bash
# Proves the library drops into a real Phoenix + Ecto + PostgreSQL host and
# ships in its release:
#   (a) from a clean state, compile examples/host_app (tests included) with
#       --warnings-as-errors and run its suite against PostgreSQL;
#   (b) build its prod release, copy it outside the repository, create and
#       migrate a database with `bin/host_app eval`, seed it, start the
#       release as a daemon and call every route with curl;
#   (c) the same from a clean _build with OPENAGENTS_POLICY_NIF_PATH naming a
#       prebuilt library and no cargo on PATH (only a fake one that fails and
#       records being run): cargo is never run.
# DATABASE_URL names the PostgreSQL server (and the database: the suite
# appends _test, the releases _release); unset, scripts/postgres.sh starts one.
# HOST_CHECK_PORT is the port the daemons listen on (default 4791).
# Run from anywhere: paths are relative to the repository root.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
APP="$ROOT/examples/host_app"
NIF=libopenagents_policy_nif
PORT=${HOST_CHECK_PORT:-4791}
WORK="$(mktemp -d "${TMPDIR:-/tmp}/release_check.XXXXXX")"
DAEMON=""
# A node name of its own: several checks may run on one machine.
export RELEASE_NODE="host_check_$$_$RANDOM" RELEASE_COOKIE="release_check_$$_$RANDOM"

cleanup() {
  if [[ -n $DAEMON ]]; then "$DAEMON" stop >/dev/null 2>&1 || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'printf "\nFAIL: line %s: %s\n" "$LINENO" "$BASH_COMMAND" >&2' ERR

# shellcheck source=castle_sys_config.sh
. "$ROOT/scripts/castle_sys_config.sh"
# The prebuilt path is tested in (c) only; (a) and (b) build with cargo.
unset OPENAGENTS_POLICY_NIF_PATH
: "${DATABASE_URL:=$("$ROOT/scripts/postgres.sh" start)}"
export DATABASE_URL

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

# The one NIF a release carries (the build may name it per build).
release_nif() {
  local found=("$1"/lib/openagents_policy-*/priv/native/$NIF*.so)
  [[ ${#found[@]} -eq 1 && -f ${found[0]} ]] ||
    fail "expected exactly one $NIF*.so in the release, found: ${found[*]}"
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
# fresh database, answers every route as the contract says.
check_release() {
  local label=$1 rel="$APP/_build/prod/rel/host_app" copy="$WORK/rel-$1"
  local shipped
  shipped=$(release_nif "$rel")
  echo "  the release carries ${shipped#"$rel"/}"
  rm -rf "$copy"
  cp -a "$rel" "$copy"
  local bin="$copy/bin/host_app"
  # The release's own database on the same server, made afresh.
  local db_url="${DATABASE_URL%/*}/$(basename "${DATABASE_URL%%\?*}")_release"
  # From the release's root: castle's start makes releases/RELEASES there.
  rel() { (cd "$copy" && DATABASE_URL="$db_url" PORT="$PORT" PHX_SERVER=true "$bin" "$@"); }

  DATABASE_URL="$db_url" PORT="$PORT" castle_sys_config "$copy" "$(cut -d' ' -f2 "$copy/releases/start_erl.data")"
  rel eval 'Application.load(:host_app); OpenAgents.Repo.__adapter__().storage_down(OpenAgents.Repo.config())' >/dev/null
  rel eval 'HostApp.Release.migrate()' || fail "$label: migrations failed"
  rel eval 'HostApp.Release.seed()' || fail "$label: seeding failed"
  # Our daemon must be the one answering: nothing may hold the port before it.
  ! curl -s -o /dev/null "http://127.0.0.1:$PORT/" || fail "port $PORT is taken; set HOST_CHECK_PORT"
  rel daemon
  DAEMON=$bin
  for _ in $(seq 1 60); do
    curl -s -o /dev/null "http://127.0.0.1:$PORT/api/targets" && break
    sleep 0.5
  done

  local path=/api/repositories/acme-widgets/attempts
  # reader:expected tiers on the seeded page (upstream.md's rules; see the
  # host's AttemptsIndexTest for the derivation).
  for pair in ":pulse pulse pulse" "stranger:pulse pulse pulse" "member:ledger ledger pulse" \
    "owner:glass pulse pulse" "operator:glass glass glass"; do
    local reader=${pair%%:*} tiers=${pair#*:}
    request GET "$path" "$reader"
    expect 200 "GET $path as ${reader:-anonymous}: $(values tier)"
    [[ $(values tier) == "$tiers" ]] || fail "${reader:-anonymous} read tiers '$(values tier)', expected '$tiers'"
  done
  request GET "$path?preload=false" owner
  expect 200 "GET $path?preload=false as owner: $(values tier)"
  [[ $(values tier) == "pulse pulse pulse pulse" ]] || fail "NotLoaded page: $(values tier)"

  request GET "$path" operator
  local first
  first=$(grep -o '"attempt":{[^}]*"id":"[^"]*"' <<<"$BODY" | head -1 | grep -o '"id":"[^"]*"' | cut -d'"' -f4)
  request GET "/api/attempts/$first" member
  expect 200 "GET /api/attempts/:id as member"
  grep -q '"evidence":\[{' <<<"$BODY" && grep -q '"traces":\[{' <<<"$BODY" || fail "no evidence or traces: $BODY"
  request GET "/api/attempts/not-an-id"
  expect 404 "GET /api/attempts/not-an-id"

  request GET /api/targets
  expect 401 "GET /api/targets as anonymous"
  request GET /api/targets owner
  expect 200 "GET /api/targets as owner: $(values lifecycle)"
  [[ $(values lifecycle) == "active cold" ]] || fail "owner's targets: $BODY"

  request POST "$path" owner '{"issue_number": 1, "target_kind": "box"}'
  expect 201 "POST $path as owner"
  # The item's tier (glass: the requester owns the link) and the link's (ledger).
  [[ $(values tier | tr ' ' '\n' | sort | paste -sd' ' -) == "glass ledger" ]] || fail "new attempt: $BODY"
  local link
  link=$(grep -o '"link":{[^}]*}' <<<"$BODY" | grep -o '"id":"[^"]*"' | cut -d'"' -f4)
  [[ -n $link ]] || fail "no link in $BODY"
  request POST "$path" owner '{not json'
  expect 400 "POST $path with a body that is not JSON"
  request POST "$path" owner '{"issue_number": "x", "target_kind": 1}'
  expect 422 "POST $path with fields of the wrong type"
  request POST "$path" "" '{"issue_number": 1, "target_kind": "box"}'
  expect 401 "POST $path as anonymous"

  request POST "/api/links/$link/revoke" stranger
  expect 403 "POST /api/links/:id/revoke as stranger"
  request POST "/api/links/$link/revoke" owner
  expect 200 "POST /api/links/:id/revoke as owner"
  request GET "$path" operator
  expect 200 "GET $path as operator after the revoke: $(values tier)"
  [[ $(values tier) == "glass glass glass" ]] || fail "the revoked attempt is still listed: $BODY"

  # At pulse a work job has no nested object, so its braces delimit it.
  request GET "$path"
  local job
  job=$(grep -o '"work_job":{[^}]*"id":"[^"]*"' <<<"$BODY" | head -1 | grep -o '"id":"[^"]*"' | cut -d'"' -f4)
  request GET "/api/delegations/$job"
  expect 200 "GET /api/delegations/:id: $(values lifecycle)"

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
[[ -n ${HEX_VENDOR_DIR:-} ]] || mix deps.get
mix format --check-formatted
MIX_ENV=test mix compile --warnings-as-errors
mix test --warnings-as-errors
done_section

section "(b) prod release built with cargo: migrated, seeded, daemon, routes over curl"
MIX_ENV=prod mix release --overwrite --quiet
cmp -s "$(release_nif "$APP/_build/prod/rel/host_app")" "$(ls "$APP"/_build/prod/lib/openagents_policy/priv/native/$NIF*.so)" ||
  fail "the release's NIF differs from the one the build installed"
check_release cargo
done_section

section "(c) prod release from a clean _build with OPENAGENTS_POLICY_NIF_PATH and no cargo on PATH"
(cd "$ROOT" && cargo build --release -p openagents_policy_nif)
target_dir="${CARGO_TARGET_DIR:-$ROOT/target}"
mkdir -p "$WORK/prebuilt" "$WORK/fakebin"
cp "$target_dir/release/$NIF.so" "$WORK/prebuilt/$NIF.so"
echo "prebuilt: $(sha256sum "$WORK/prebuilt/$NIF.so" | cut -c1-16)… $WORK/prebuilt/$NIF.so"

marker="$WORK/cargo-was-run"
cat >"$WORK/fakebin/cargo" <<FAKE
#!/bin/sh
echo "fake cargo: \$*" >>"$marker"
echo "cargo must not run when OPENAGENTS_POLICY_NIF_PATH is set" >&2
exit 101
FAKE
chmod +x "$WORK/fakebin/cargo"
# No real cargo on PATH at all: every directory holding one is left out, and
# the only `cargo` left is the one that records being run and fails.
no_cargo_path="$WORK/fakebin"
IFS=: read -ra dirs <<<"$PATH"
for dir in "${dirs[@]}"; do
  [[ -n $dir && ! -e $dir/cargo ]] && no_cargo_path+=":$dir"
done
[[ $(PATH="$no_cargo_path" command -v cargo) == "$WORK/fakebin/cargo" ]] || fail "a real cargo is still on PATH"
PATH="$no_cargo_path" cargo --version >/dev/null 2>&1 && fail "the fake cargo did not fail"
echo "  PATH without cargo: $no_cargo_path"
rm -f "$marker"

rm -rf "$APP/_build" "$APP/deps"
build_log="$WORK/prebuilt-build.log"
if ! OPENAGENTS_POLICY_NIF_PATH="$WORK/prebuilt/$NIF.so" PATH="$no_cargo_path" \
  MIX_ENV=prod mix release --overwrite --quiet >"$build_log" 2>&1; then
  cat "$build_log"
  fail "the release did not build with OPENAGENTS_POLICY_NIF_PATH set"
fi
sed 's/^/  > /' "$build_log"
[[ ! -e $marker ]] || fail "cargo was run: $(cat "$marker")"
cmp -s "$WORK/prebuilt/$NIF.so" "$(release_nif "$APP/_build/prod/rel/host_app")" ||
  fail "the release does not carry the prebuilt NIF byte for byte"
echo "  cargo was not run; the release carries the prebuilt library byte for byte"
PATH="$no_cargo_path" check_release prebuilt
done_section

printf '\n==== release_check: all passed in %ds ====\n' "$((SECONDS - START))"
