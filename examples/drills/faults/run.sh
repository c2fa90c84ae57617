#!/usr/bin/env bash
# Faults against the example host's production release: load,
# crash mid-write, the database going away, a panic in the core. Run from
# any directory (these paths are under examples/drills/).
#
#   faults/run.sh load    [--clients 50] [--duration 60]   two identical runs, RSS
#   faults/run.sh crash   [--kills 20]                     kill -9 during POSTs
#   faults/run.sh dbdown  [--clients 50] [--before 8] [--down 8]   stop PostgreSQL under load,
#                                                         then kill the repo's pool
#   faults/run.sh panic   [--duration 10]                  the NIF built with panic_probe
#   faults/run.sh short                                    all four, short (make check)
#
# Its own PostgreSQL on FAULTS_PG_PORT (5499; the database-down run stops only
# that one), a database per mode, the release (a copy of _build/prod/rel, built
# if missing) on FAULTS_PORT (4891). Each mode exits 1 when a check fails.
# Whatever it started is stopped at exit (lib/drill.sh); FAULTS_KEEP=1 keeps
# its work directory.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../lib/drill.sh"
ROOT="$(cd "$DRILLS/../.." && pwd)"
APP="$ROOT/examples/host_app"
FAULTS="$DRILLS/faults"
PG_PORT=${FAULTS_PG_PORT:-5499}
PORT=${FAULTS_PORT:-4891}
export PATH="$HOME/.cargo/bin:$PATH"
export RELEASE_NODE="faults_$$" RELEASE_COOKIE="faults_$$"
export OPENAGENTS_PG_DIR="${FAULTS_PG_DIR:-/tmp/openagents-pg-$PG_PORT}"
BIN=""
drill_begin faults "${FAULTS_KEEP:-}"

say() { printf '%s\n' "$*"; }
fail() {
  printf 'FAIL: %s\n' "$*" >&2
  # What the release logged about it (its log dies with $WORK).
  if [[ -n $BIN && -d ${BIN%/bin/*}/tmp/log ]]; then
    echo "the release's errors, by kind:" >&2
    grep -h -o '\[error\] .*' "${BIN%/bin/*}"/tmp/log/erlang.log.* 2>/dev/null |
      cut -c1-160 | sed 's/[0-9][0-9]*/N/g' | sort | uniq -c | sort -rn | head -20 >&2 || true
    # The first exception a request raised that is not the database being
    # away (what unavailable.ex answers 503: a ConnectionError, PostgreSQL's
    # 57P* and 08*), with its stack.
    awk '/\[error\] \*\* \(/ && !/ConnectionError|Postgrex\.Error\) [A-Z]+ (57P|08)/ { n = 30 } n > 0 { print; n-- }' \
      "${BIN%/bin/*}"/tmp/log/erlang.log.* 2>/dev/null | head -30 >&2 || true
  fi
  exit 1
}
# The release, stopped before drill_cleanup kills whatever is left.
drill_stop() { [[ -z $BIN ]] || "$BIN" stop >/dev/null 2>&1; }

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

# ── PostgreSQL, ours alone ───────────────────────────────────────────────
pg() { "$DRILLS/postgres.sh" "$1" "$PG_PORT" 2>/dev/null; }
sql() { psql "$DATABASE_URL" -X -At -q -v ON_ERROR_STOP=1 -c "$1"; }

# ── the release ──────────────────────────────────────────────────────────
# A copy of the host's prod release (built when missing or stale; an
# up-to-date build is a no-op), so a rebuild never pulls files from under it.
release_copy() {
  local dest=$1
  if [[ ! -d $WORK/built ]]; then
    (cd "$APP" && MIX_ENV=prod mix release --overwrite --quiet >/dev/null)
    cp -a "$APP/_build/prod/rel/host_app" "$WORK/built"
  fi
  rm -rf "$dest"
  cp -a "$WORK/built" "$dest"
}

# POOL_SIZE: a connection per client (50), so no request waits in the pool's
# queue (10 would shed load with 503s). LOG_LEVEL=warning and a large
# RUN_ERL_LOG_MAXSIZE: so no failure's exception is dropped or rotated away
# before fail() reads the log.
rel() {
  (cd "${BIN%/bin/*}" && DATABASE_URL="$DATABASE_URL" PORT="$PORT" PHX_SERVER=true \
    POOL_SIZE="${FAULTS_POOL_SIZE:-50}" LOG_LEVEL=warning RUN_ERL_LOG_MAXSIZE=100000000 \
    "$BIN" "$@")
}

# prepare MODE: PostgreSQL, the load client, the release (a copy in WORK/rel)
# and a fresh, migrated and seeded database for MODE (one VM boot).
prepare() {
  drill_port_free "$PORT" FAULTS_PORT
  pg start >/dev/null
  drill_point postgres
  compile_client
  BIN="$WORK/rel/bin/host_app"
  release_copy "$WORK/rel"
  export DATABASE_URL="postgres://postgres:postgres@localhost:$PG_PORT/faults_$1"
  rel eval 'Application.load(:host_app)
    OpenAgents.Repo.__adapter__().storage_down(OpenAgents.Repo.config())
    HostApp.Release.migrate()
    HostApp.Release.seed()' >/dev/null
}

start() {
  drill_port_free "$PORT" FAULTS_PORT
  rel daemon
  for _ in $(seq 1 120); do
    if curl -s -o /dev/null "http://127.0.0.1:$PORT/api/targets"; then
      drill_point release
      return
    fi
    sleep 0.25
  done
  tail -20 "${BIN%/bin/*}"/tmp/log/erlang.log.* >&2 2>/dev/null || true
  fail "the release did not answer on port $PORT"
}

# Stops the release and waits for its VM to be gone, so that the next start
# neither finds its node name taken nor is answered by the old VM. A stop
# drains the endpoint (Phoenix's drainer) and the pool first: up to 60 s, for
# a machine busy with other lanes.
stop() {
  local beam
  beam=$("$BIN" pid 2>/dev/null) || beam=""
  "$BIN" stop >/dev/null 2>&1 || true
  [[ -z $beam ]] || gone "$beam"
}
gone() {
  for _ in $(seq 1 1200); do
    kill -0 "$1" 2>/dev/null || return 0
    sleep 0.05
  done
  fail "the VM $1 did not go away"
}
pid() { "$BIN" pid; }
rss() { ps -o rss= -p "$1" | tr -d ' '; }

# The load client (faults/load.exs), from the library's test build.
load() {
  (cd "$ROOT" && MIX_ENV="test" mix run --no-start "$FAULTS/load.exs" --port "$PORT" "$@")
}

compile_client() {
  [[ -n ${CLIENT_READY:-} ]] || (cd "$ROOT" && MIX_ENV="test" mix compile >/dev/null)
  CLIENT_READY=1
}

# ── load ─────────────────────────────────────────────────────────────────
mode_load() {
  local clients=50 duration=60
  while [[ $# -gt 0 ]]; do
    case $1 in
      --clients) clients=$2; shift 2 ;;
      --duration) duration=$2; shift 2 ;;
      *) fail "load: unknown option $1" ;;
    esac
  done
  prepare load
  start
  local beam seeded_attempts seeded_links
  beam=$(pid)
  seeded_attempts=$(sql "select string_agg(quote_literal(id::text), ',') from forge_assignments")
  seeded_links=$(sql "select string_agg(quote_literal(id::text), ',') from artifact_links")
  say "load: release pid $beam, RSS at start $(rss "$beam") kB"
  local before=() after=()
  for run in 1 2; do
    # The same data for both runs: what the previous run created is removed.
    sql "delete from forge_assignments where id::text not in ($seeded_attempts);
         delete from artifact_links where id::text not in ($seeded_links)" >/dev/null
    before[run]=$(rss "$beam")
    load --clients "$clients" --duration "$duration" | sed "s/^/run $run: /"
    after[run]=$(rss "$beam")
    say "run $run: RSS before ${before[$run]} kB, after ${after[$run]} kB"
  done
  [[ $(pid) == "$beam" ]] || fail "the release restarted during the load"
  awk -v a="${after[2]}" -v b="${before[2]}" 'BEGIN {
    d = (a - b) / b * 100; printf "load: RSS after the second run is %+.1f%% of RSS before it\n", d
    exit (d > 10 || d < -10) }' || fail "RSS moved more than 10% over the second run"
  stop
}

# ── crash mid-write ──────────────────────────────────────────────────────
mode_crash() {
  local kills=20
  while [[ $# -gt 0 ]]; do
    case $1 in
      --kills) kills=$2; shift 2 ;;
      *) fail "crash: unknown option $1" ;;
    esac
  done
  prepare crash
  start
  local acked="$WORK/acked" stopfile="$WORK/stop-posting" users_before
  users_before=$(sql "select count(*) from forge_assignments where requesting_principal->>'type' = 'user'")
  : >"$acked"
  # A stream of POSTs from 8 connections, through every kill and restart:
  # each 201's attempt id goes to $acked.
  (cd "$ROOT" && MIX_ENV="test" mix run --no-start "$FAULTS/posts.exs" \
    --port "$PORT" --acked "$acked" --stop "$stopfile") &
  local poster=$!
  local seed=${FAULTS_SEED:-$RANDOM} i at beam
  RANDOM=$seed
  say "crash: $kills kills at random moments (seed $seed)"
  sleep 1
  for i in $(seq 1 "$kills"); do
    # 0.2 to 2.0 s into a stream of writes.
    at=$(awk -v r="$RANDOM" 'BEGIN { printf "%.2f", 0.2 + (r % 1800) / 1000 }')
    sleep "$at"
    beam=$(pid)
    kill -9 "$beam"
    gone "$beam"
    local acked_now
    acked_now=$(wc -l <"$acked")
    start
    say "  kill $i after ${at}s: $acked_now attempts acknowledged so far; restarted"
  done
  sleep 1
  touch "$stopfile"
  wait "$poster" || fail "the POST stream failed"
  stop
  pg start >/dev/null

  local total users one_link dangling half acked_missing
  total=$(sql "select count(*) from forge_assignments")
  users=$(sql "select count(*) from forge_assignments where requesting_principal->>'type' = 'user'")
  # Every attempt a user requested has exactly one link: its own, bound to it.
  one_link=$(sql "select count(*) from forge_assignments a
    where a.requesting_principal->>'type' = 'user' and (a.artifact_link_id is null
      or (select count(*) from artifact_links l where l.artifact_type = 'attempt'
            and l.artifact_ref = a.id::text) <> 1
      or not exists (select 1 from artifact_links l where l.id = a.artifact_link_id
            and l.artifact_ref = a.id::text))")
  # No link points at a missing attempt (nor is left unbound).
  dangling=$(sql "select count(*) from artifact_links l where l.artifact_type = 'attempt'
    and not exists (select 1 from forge_assignments a where a.id::text = l.artifact_ref)")
  # No row half written: the link is the requester's, whole; the attempt whole.
  half=$(sql "select count(*) from forge_assignments a left join artifact_links l
    on l.id = a.artifact_link_id where a.requesting_principal->>'type' = 'user' and (l.id is null
      or l.account_id::text <> a.requesting_principal->>'id' or l.tier is null
      or l.consent is null or l.repository_id <> a.repository_id or a.state is null
      or a.admitted_at is null or a.target_kind is null or a.transparency_tier is null)")
  # Every attempt acknowledged with a 201 is there.
  acked_missing=$(psql "$DATABASE_URL" -X -At -q -v ON_ERROR_STOP=1 \
    -c "create temp table acked (id text)" -c "\\copy acked from '$acked'" \
    -c "select count(*) from acked k where not exists
          (select 1 from forge_assignments a where a.id::text = k.id)" | tail -1)
  say "crash: $kills kills; $(wc -l <"$acked") POSTs acknowledged; $total attempts ($users requested" \
    "by users, of which $((users - users_before - $(wc -l <"$acked"))) committed with no 201 received)"
  say "crash: attempts without exactly one link $one_link; links to a missing attempt $dangling;" \
    "half-written rows $half; acknowledged attempts missing $acked_missing"
  [[ $one_link == 0 && $dangling == 0 && $half == 0 && $acked_missing == 0 ]] ||
    fail "the database lost or tore a write"
  [[ $(wc -l <"$acked") -gt 0 ]] || fail "no POST was acknowledged"
}

# ── the database goes away ───────────────────────────────────────────────
# recovered SINCE WHAT: waits (30 s at most) for the host's first correct
# answer that needs the database (a page for the owner), and says how long
# after SINCE (when WHAT happened) it came.
recovered() {
  local page="http://127.0.0.1:$PORT/api/repositories/acme-widgets/attempts" code=""
  for _ in $(seq 1 600); do
    code=$(curl -s -o "$WORK/page" -w '%{http_code}' -H 'authorization: Bearer owner' "$page")
    [[ $code == 200 ]] && break
    sleep 0.05
  done
  [[ $code == 200 ]] || fail "the host did not answer 200 within 30 s after $2 (last status $code)"
  say "dbdown: the host answered 200 again $(since "$1") s after $2"
}

mode_dbdown() {
  local clients=50 down=8 lead=8
  while [[ $# -gt 0 ]]; do
    case $1 in
      --clients) clients=$2; shift 2 ;;
      --down) down=$2; shift 2 ;;
      --before) lead=$2; shift 2 ;;
      *) fail "dbdown: unknown option $1" ;;
    esac
  done
  prepare dbdown
  start
  local beam duration=$((lead + down + ${FAULTS_AFTER:-12})) out="$WORK/dbdown-load"
  beam=$(pid)
  load --clients "$clients" --duration "$duration" --allow-503 >"$out" 2>&1 &
  local loader=$!
  # The client reads its first snapshot from PostgreSQL before it starts:
  # the countdown starts once it has (booting it may take longer than
  # --before on a loaded machine).
  for _ in $(seq 1 600); do
    grep -q "clients starting" "$out" 2>/dev/null && break
    kill -0 "$loader" 2>/dev/null || break
    sleep 0.2
  done
  grep -q "clients starting" "$out" || { cat "$out"; fail "the load client did not start"; }
  sleep "$lead"
  pg stop >/dev/null
  say "dbdown: PostgreSQL stopped under $clients clients; down for ${down}s"
  sleep "$down"
  pg start >/dev/null
  recovered "$(now)" "PostgreSQL came back"
  # The repo restarting under load, as when its pool crashes (the repo's
  # supervisor allows its pool no restart): 503s until it is back, no 500.
  rel rpc '%{pid: pool} = Ecto.Repo.Registry.lookup(OpenAgents.Repo); Process.exit(pool, :kill)'
  recovered "$(now)" "the repo's pool was killed"
  kill -0 "$loader" 2>/dev/null || fail "the load ended before the repo was back; raise FAULTS_AFTER"
  local status=0
  wait "$loader" || status=$?
  cat "$out"
  [[ $status == 0 ]] || fail "the load saw a wrong answer (above)"
  grep -q "503 (database down) [1-9]" "$out" || fail "no request saw the database down"
  [[ $(pid) == "$beam" ]] || fail "the release restarted"
  stop
}

# ── a panic in the core ──────────────────────────────────────────────────
mode_panic() {
  local duration=10
  while [[ $# -gt 0 ]]; do
    case $1 in
      --duration) duration=$2; shift 2 ;;
      *) fail "panic: unknown option $1" ;;
    esac
  done
  prepare panic
  cp -a "$WORK/rel" "$WORK/probe"
  # The release's one NIF library (lib/openagents_policy-<vsn>/priv/native/:
  # libopenagents_policy_nif.so from rustler 0.36, openagents_policy_nif.so
  # from 0.37), replaced in the copy by the probe's.
  "$ROOT/scripts/probe_nif.sh" install "$WORK/probe" >/dev/null
  cmp -s "$(find "$WORK/rel" -type f -name '*openagents_policy_nif*.so')" \
    "$(find "$WORK/probe" -type f -name '*openagents_policy_nif*.so')" &&
    fail "the probe library is the shipped one"
  # An attempt with no link whose tier column holds the probe word (the
  # core's ladder::PANIC_PROBE), in a repository of its own that the load
  # never reads: its pages ask the core to read that word at run time.
  local attempt page show body code
  attempt=$(sql "with r as (insert into repositories (id, slug, name, inserted_at, updated_at)
      values (gen_random_uuid(), 'faults-probe', 'faults probe', now(), now()) returning id),
    i as (insert into issues (id, repository_id, number, title, inserted_at, updated_at)
      select gen_random_uuid(), r.id, 1, 'the panic probe', now(), now() from r
      returning id, repository_id)
    insert into forge_assignments (id, repository_id, issue_id, target_kind,
      requesting_principal, state, admitted_at, transparency_tier, inserted_at, updated_at)
    select gen_random_uuid(), i.repository_id, i.id, 'box', '{\"type\": \"agent\", \"id\": \"probe\"}',
      'admitted', now(), 'panic_probe', now(), now() from i returning id")
  page="http://127.0.0.1:$PORT/api/repositories/faults-probe/attempts"
  show="http://127.0.0.1:$PORT/api/attempts/$attempt"

  # The shipped release: the probe word is an unknown tier, which names dark,
  # so the attempt is left out of its page and is a 404 for any reader but an
  # operator, who is raised to glass over any tier column.
  start
  body=$(curl -s -H 'authorization: Bearer owner' "$page")
  [[ $body == '{"data":[],"next":null}' ]] || fail "the shipped release's probe page for a reader: $body"
  say "panic: the shipped release answers the probe repository's page for a reader (owner): $body"
  code=$(curl -s -o "$WORK/panic-body" -w '%{http_code}' -H 'authorization: Bearer owner' "$show")
  [[ $code == 404 ]] || fail "the shipped release's probe attempt for a reader: $code $(cat "$WORK/panic-body")"
  body=$(curl -s -H 'authorization: Bearer operator' "$page")
  [[ $body == *'"tier":"glass"'* ]] || fail "the shipped release's probe page for an operator: $body"
  say "panic: the probe attempt for that reader: $code; for an operator: on its page at glass"
  stop

  # The same release carrying the probe build.
  BIN="$WORK/probe/bin/host_app"
  start
  local beam url
  beam=$(pid)
  # The page filters in SQL (where_visible/2 asks the core about the tier
  # vocabulary's words only), so the probe word never reaches the core
  # there; the attempt's own route hands it to the core.
  code=$(curl -s -o "$WORK/panic-body" -w '%{http_code}' -H 'authorization: Bearer owner' "$page")
  body=$(cat "$WORK/panic-body")
  say "panic: the probe build answers ${page#http://127.0.0.1:"$PORT"}: $code $body"
  [[ $code == 200 && $body == '{"data":[],"next":null}' ]] || fail "expected the page without the probe attempt"
  code=$(curl -s -o "$WORK/panic-body" -w '%{http_code}' -H 'authorization: Bearer owner' "$show")
  body=$(cat "$WORK/panic-body")
  say "panic: the probe build answers ${show#http://127.0.0.1:"$PORT"}: $code $body"
  [[ $code == 500 ]] || fail "expected 500"
  [[ $body == '{"errors":{"detail":"Internal Server Error"}}' ]] || fail "expected the JSON 500"

  # Panics again and again while the load runs on every other route.
  local panics=0 wrong=0 operator=0 filtered=0
  load --duration "$duration" --clients 20 >"$WORK/panic-load" 2>&1 &
  local loader=$!
  local readers=(owner operator stranger member "") reader i=0
  while kill -0 "$loader" 2>/dev/null; do
    # Both probe routes, every reader (anonymous too): on the attempt's
    # route the probe word is read before the reader's tier is applied, and
    # the page leaves the attempt out in SQL; except for an operator, who
    # reads a record with no link as glass without its tier being read (as
    # the seeds' `unlinked_tier(_tier, %{admin: true})` does): a 200 at glass.
    if (( i % 2 )); then url=$show; else url=$page; fi
    reader=${readers[$(( i % 5 ))]}
    i=$((i + 1))
    code=$(curl -s -o "$WORK/panic-body" -w '%{http_code}' \
      ${reader:+-H "authorization: Bearer $reader"} "$url")
    if grep -q 'PANIC-PROBE-FIRED' "$WORK/panic-body"; then
      wrong=$((wrong + 1))
    elif [[ $reader == operator ]]; then
      if [[ $code == 200 ]] && grep -q '"tier":"glass"' "$WORK/panic-body"; then
        operator=$((operator + 1))
      else
        wrong=$((wrong + 1))
      fi
    elif [[ $url == "$page" ]]; then
      if [[ $code == 200 ]] && [[ $(cat "$WORK/panic-body") == '{"data":[],"next":null}' ]]; then
        filtered=$((filtered + 1))
      else
        wrong=$((wrong + 1))
      fi
    elif [[ $code == 500 ]]; then
      panics=$((panics + 1))
    else
      wrong=$((wrong + 1))
    fi
  done
  local status=0
  wait "$loader" || status=$?
  cat "$WORK/panic-load"
  say "panic: $panics probe requests answered a JSON 500 during the load, $operator an operator's 200 at glass," \
    "$filtered a page without the probe attempt, $wrong otherwise;" \
    "release pid $beam before, $(pid) after"
  [[ $status == 0 && $wrong == 0 && $panics -gt 0 && $operator -gt 0 ]] || fail "the panic reached a reader or a route"
  [[ $(pid) == "$beam" ]] || fail "the VM went down"
  # The panic's message went to the release's log, not to a reader.
  grep -rqs 'PANIC-PROBE-FIRED' "$WORK/probe/tmp/log" || fail "the panic's message is not in the release's log"
  say "panic: the panic's message is in the release's log ($WORK/probe/tmp/log), in no body"
  stop
}

# The short versions, for make check: one release build, one client build.
mode_short() {
  mode_panic --duration 5
  mode_load --clients 20 --duration 5
  mode_crash --kills 3
  FAULTS_AFTER=5 mode_dbdown --clients 20 --before 3 --down 3
}

mode=${1:-}
[[ -n $mode ]] || fail "usage: $0 load|crash|dbdown|panic|short [options]"
shift
case $mode in
  load | crash | dbdown | panic | short) "mode_$mode" "$@" ;;
  *) fail "unknown mode $mode" ;;
esac
say "faults $mode: every check passed in ${SECONDS}s"
