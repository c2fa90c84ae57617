# What every drill shares (sourced by release_check.sh, faults/run.sh and
# rolling_replace.sh): a work directory, and a cleanup that runs however the
# drill ends (passed, a check failed, `set -e`, TERM, INT or HUP).
#
#   drill_begin NAME [KEEP]   WORK, a fresh directory under TMPDIR. From then
#       on, at exit: the drill's own `drill_stop` (when it defines one), then
#       every process it started that still runs (its descendants, and what
#       names WORK on its command line: the releases run from copies in it),
#       the PostgreSQL servers it started, and WORK (kept when KEEP is set).
#       The cleanup itself never stops at a failing command.
#   drill_port_free PORT VARIABLE   exits naming what holds PORT (ss -ltnp)
#       and the VARIABLE that picks another port.
#   drill_point NAME   with DRILL_FAIL_AT=NAME the drill fails here on
#       purpose; with DRILL_WAIT_AT=NAME it touches WORK/waiting and waits
#       here (for a TERM). test/repo/drills_test.exs uses both.
DRILLS="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

drill_begin() {
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")"
  DRILL_KEEP=${2:-}
  # The PostgreSQL servers postgres.sh starts for this drill (not one already running).
  export OPENAGENTS_PG_STARTED="$WORK/pg_started"
  trap drill_cleanup EXIT
}

drill_cleanup() {
  local status=$? pids
  set +eu
  trap - ERR
  trap '' TERM INT HUP
  [[ $(type -t drill_stop) != function ]] || drill_stop "$status"
  pids=$(drill_descendants $$)
  [[ -z $pids ]] || kill -KILL $pids 2>/dev/null
  wait 2>/dev/null
  pkill -KILL -f -- "$WORK/" 2>/dev/null
  "$DRILLS/postgres.sh" stop-started
  if [[ -n $DRILL_KEEP ]]; then echo "kept $WORK" >&2; else rm -rf "$WORK"; fi
  exit "$status"
}

drill_descendants() {
  local child
  for child in $(ps -o pid= --ppid "$1"); do
    drill_descendants "$child"
    echo "$child"
  done
}

drill_port_free() {
  local held
  held=$(ss -Hltnp "sport = :$1" 2>/dev/null)
  if [[ -n $held ]] || curl -s -o /dev/null "http://127.0.0.1:$1/"; then
    echo "FAIL: port $1 is taken (${held:-something answers HTTP on it}); set $2 to another" >&2
    exit 1
  fi
}

drill_point() {
  if [[ ${DRILL_FAIL_AT:-} == "$1" ]]; then
    echo "FAIL: DRILL_FAIL_AT=$1, on purpose" >&2
    exit 1
  fi
  if [[ ${DRILL_WAIT_AT:-} == "$1" ]]; then
    touch "$WORK/waiting"
    sleep 600 &
    wait $!
  fi
}
