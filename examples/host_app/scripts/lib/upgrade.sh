# Sourced by the two upgrade drivers, scripts/hot_upgrade.sh (one node) and
# scripts/rolling_upgrade.sh (three nodes): what both do the same way.
#   - on sourcing: APP (examples/host_app), ROOT (the checkout), NIF (a glob
#     of the NIF library's name in a release: one file in each version's own
#     lib/openagents_policy-<vsn>/priv/native/, so a relup always loads a new
#     path; rustler names it libopenagents_policy_nif.so up to 0.36 and
#     openagents_policy_nif.so from 0.37, rustler_precompiled after its
#     artifact), castle_sys_config (scripts/castle_sys_config.sh)
#     and the ERR trap that names a failed line;
#   - the run: its mode (full|short: PHASE, CLIENTS), its environment and
#     database, the one-line checks (ok, fail, step);
#   - releases A and B: the copy of the checkout both are built in (seeded
#     with what the checkout built), B's edits, the relup A -> B;
#   - a release: a fresh database, a daemon that keeps its whole log, waiting
#     for it to answer, stopping it;
#   - the load driver (scripts/*_load.exs): started, then stopped and judged.
# The caller runs under `set -euo pipefail` and sources this first. A failed
# command inside a function stops the run as at top level, but the ERR trap
# names no line for it (bash runs the trap in functions only under errtrace,
# which would run it inside command substitutions too): the builds, the
# relup and the daemon's start say what failed with `fail`.

APP="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ROOT="$(cd "$APP/../.." && pwd)"
NIF='*openagents_policy_nif*.so'
# shellcheck source=../castle_sys_config.sh
. "$APP/scripts/castle_sys_config.sh"
trap 'printf "\nFAIL: line %s: %s\n" "$LINENO" "$BASH_COMMAND" >&2' ERR

# upgrade_mode [full|short]: sets MODE, PHASE (seconds of load per phase) and CLIENTS.
upgrade_mode() {
  MODE=${1:-full}
  case $MODE in
    full) PHASE=5 CLIENTS=10 ;;
    short) PHASE=1 CLIENTS=5 ;;
    *) echo "usage: $0 [full|short]" >&2 && exit 2 ;;
  esac
}

# upgrade_env SUFFIX: DATABASE_URL (and DB_URL) on its database + _SUFFIX, PHX_SERVER, START.
upgrade_env() {
  : "${DATABASE_URL:=$("$APP/scripts/postgres.sh" start)}"
  DB_URL="${DATABASE_URL%/*}/$(basename "${DATABASE_URL%%\?*}")_$1"
  export DATABASE_URL="$DB_URL" PHX_SERVER=true
  START=$SECONDS
}

# ok WHAT: a passed check's line.
ok() { echo "ok   $*"; }

# fail WHAT: a failed check's line, and exit 1.
fail() {
  echo "FAIL $*"
  exit 1
}

# step WHAT: a step's heading, with the seconds since START.
step() { printf '\n== %s (%ds)\n' "$*" "$((SECONDS - START))"; }

# now_us: the time in epoch microseconds, the load drivers' clock (System.os_time(:microsecond)).
now_us() { date +%s%6N; }

# A and B are built in one directory, as a deploy pipeline builds them: a
# module's code may hold its source path (an Ecto query does), and the two
# releases must differ only by the change under test. The checkout is left
# as it is; what it has built already (the host's prod build, the NIF rustler
# built into priv/native that it links to, cargo's crates.io builds) seeds
# the copy. The copy is a checkout: no checksum file (nor dist/), so rustler
# builds each release's NIF from the copy's crates, with cargo, into TARGET
# (where cargo metadata, which OpenAgentsPolicy.Native asks, finds
# CARGO_TARGET_DIR).
# seed_copy COPY TARGET: the checkout (at 0.1.0) into COPY, its builds as seeds; CARGO_TARGET_DIR=TARGET.
seed_copy() {
  local copy=$1 target=$2
  grep -q '@version "0.1.0"' "$ROOT/mix.exs" || fail "the library in the checkout is not version 0.1.0"
  mkdir -p "$copy" "$target"
  tar -C "$ROOT" --exclude=./.git --exclude=./target --exclude=./_build --exclude=./deps \
    --exclude=./doc --exclude=./dist --exclude=./checksum-Elixir.OpenAgentsPolicy.Native.exs \
    --exclude=./examples/host_app/_build --exclude=./examples/host_app/deps -cf - . |
    tar -C "$copy" -xf - || fail "the checkout was not copied into $copy"
  if [[ -d $APP/_build/prod ]]; then
    mkdir -p "$copy/examples/host_app/_build"
    cp -a "$APP/_build/prod" "$copy/examples/host_app/_build/prod"
    rm -rf "$copy/examples/host_app/_build/prod/rel"
  fi
  if [[ -d ${CARGO_TARGET_DIR:-$ROOT/target}/release ]]; then
    cp -a "${CARGO_TARGET_DIR:-$ROOT/target}/release" "$target/release"
  fi
  export CARGO_TARGET_DIR="$target"
}

# build_release HOST: the prod release of the host at HOST (_build/prod/rel/host_app, and its tarball).
build_release() {
  (cd "$1" && MIX_ENV=prod mix release --overwrite --quiet) || fail "mix release failed in $1"
}

# edit_b COPY: COPY made B: an attempt's terminal_commit ledger -> glass, library and host at 0.1.1,
# and the decision document the package carries (priv/decisions.json) written anew, as a
# maintainer does after a rule change (the library's tests fail until it is).
edit_b() {
  local core="$1/native/openagents_policy/src/disclosure.rs"
  sed -i 's/Field::new("terminal_commit", Ledger),/Field::new("terminal_commit", Glass),/' "$core"
  grep -q 'Field::new("terminal_commit", Glass),' "$core" || fail "the core edit did not apply to $core"
  (cd "$1" && cargo run -q --locked -p openagents_policy --example decisions -- document >priv/decisions.json.new &&
    mv priv/decisions.json.new priv/decisions.json) || fail "B's decision document could not be written"
  if cmp -s "$1/priv/decisions.json" "$ROOT/priv/decisions.json"; then fail "B's decision document is A's"; fi
  sed -i 's/@version "0.1.0"/@version "0.1.1"/' "$1/mix.exs"
  sed -i 's/version: "0.1.0",/version: "0.1.1",/' "$1/examples/host_app/mix.exs"
  grep -q '@version "0.1.1"' "$1/mix.exs" && grep -q 'version: "0.1.1",' "$1/examples/host_app/mix.exs" ||
    fail "the version bump did not apply"
}

# build_relup HOST A_ROOT: HOST/relup from A (at A_ROOT) to B (built at HOST), then B's tarball rebuilt with it.
build_relup() {
  local host=$1 from=$2
  # `compile` first: from Elixir 1.15 on, only a project task puts the apps
  # of :extra_applications (:sasl, whose systools makes the relup) on the code
  # path; a dependency's task run alone finds no sasl.
  (cd "$host" && rm -f relup &&
    MIX_ENV=prod mix do compile + forecastle.relup \
      --target "$host/_build/prod/rel/host_app/releases/0.1.1/host_app" \
      --fromto "$from/releases/0.1.0/host_app") || fail "mix forecastle.relup failed"
  [[ -f $host/relup ]] || fail "mix forecastle.relup wrote no relup"
  build_release "$host"
  tar -tzf "$host/_build/prod/host_app-0.1.1.tar.gz" releases/0.1.1/relup >/dev/null ||
    fail "B's tarball carries no relup"
}

# fresh_database BIN...: the database of the release BIN... runs, dropped, migrated and seeded.
fresh_database() {
  "$@" eval 'Application.load(:host_app); OpenAgents.Repo.__adapter__().storage_down(OpenAgents.Repo.config())' \
    >/dev/null && "$@" eval 'HostApp.Release.migrate()' && "$@" eval 'HostApp.Release.seed()'
}

# start_daemon BIN...: `BIN... daemon`, its whole log kept.
start_daemon() {
  # run_erl keeps the daemon's output in erlang.log.1..N, each cut at
  # RUN_ERL_LOG_MAXSIZE bytes and the oldest overwritten: at its defaults
  # (five of 100 kB) the request log of a run overwrites its start, and with
  # it a failed request's exception. These hold every line of a run.
  RUN_ERL_LOG_GENERATIONS=5 RUN_ERL_LOG_MAXSIZE=$((64 << 20)) "$@" daemon ||
    fail "$* daemon did not start"
}

# port_free PORT SETTING: fail unless PORT is free (SETTING: the variable that moves it).
port_free() {
  ! curl -s -o /dev/null "http://127.0.0.1:$1/" || fail "port $1 is taken; set $2"
}

# wait_http PORT TRIES: wait for the host on PORT to answer, TRIES times 0.2 s at the most.
wait_http() {
  for _ in $(seq 1 "$2"); do
    curl -s -o /dev/null "http://127.0.0.1:$1/api/targets" && break
    sleep 0.2
  done
}

# stop_release ROOT PID: `bin/host_app stop` at ROOT; its VM (OS pid PID, if known) killed after 5 s.
stop_release() {
  local pid=$2
  (cd "$1" && bin/host_app stop >/dev/null 2>&1) || true
  for _ in $(seq 1 50); do [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  [[ -z $pid ]] || kill -KILL "$pid" 2>/dev/null || true
}

# start_load OUT DIR CMD...: the load CMD... in the background (LOAD_PID, output OUT) until DIR/ready.
start_load() {
  local out=$1 dir=$2
  shift 2
  "$@" >"$out" 2>&1 &
  LOAD_PID=$!
  for _ in $(seq 1 300); do
    [[ -e $dir/ready ]] && break
    kill -0 "$LOAD_PID" 2>/dev/null || { cat "$out"; fail "the load stopped before it began"; }
    sleep 0.1
  done
  [[ -e $dir/ready ]] || fail "the load did not start"
}

# judge_load OUT DIR: the load stopped (DIR/stop), its checks (OUT) printed; fail unless all passed.
judge_load() {
  local status=0
  touch "$2/stop"
  wait "$LOAD_PID" || status=$?
  LOAD_PID=""
  cat "$1"
  [[ $status -eq 0 ]] || fail "the load's checks (above)"
}
