#!/usr/bin/env bash
# A new library version shipped as the app ships any dependency change: by
# rolling replacement, a new image node by node, old and new nodes answering
# side by side during the window.
#   1. builds in a copy of the checkout release A and candidate B (terminal_commit
#      ledger -> glass in the core, priv/decisions.json written anew by the core's
#      `decisions` example, library and host 0.1.1; a release directory of its
#      own), and the document of a widening W (terminal_commit -> pulse);
#   2. three nodes of A (own release copy, port, node name; one database) under
#      the load (rolling_replace_load.exs), round-robin over the rotation;
#   3. before any node is touched, `mix openagents_policy.gate A CANDIDATE --format
#      json`: B passes (exit 0), W is refused (exit 1, its sha256 named to accept);
#   4. node by node: out of rotation, drained, stopped, B started in its place
#      (same port and name), back in rotation once it answers with B's digest;
#   5. the load judged; the last line sums it up.
#
#   examples/drills/rolling_replace.sh [short|full]   (load per phase: 2 s, 4 clients | 10 s, 10)
#
# DATABASE_URL: the PostgreSQL server (unset: postgres.sh starts one);
# the database is its name + _rolling_replace. ROLLING_REPLACE_PORTS (default
# "4761 4762 4763"); ROLLING_REPLACE_RECORD=PATH: the record (JSON);
# ROLLING_REPLACE_KEEP=1 keeps the work directory. Every daemon, load and
# server it starts is stopped on exit, failure and TERM included (lib/drill.sh).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/drill.sh"
ROOT="$(cd "$DRILLS/../.." && pwd)"
APP="$ROOT/examples/host_app"
MODE=${1:-short}
case $MODE in
  short) PHASE=2 CLIENTS=4 ;;
  full) PHASE=10 CLIENTS=10 ;;
  *) echo "usage: $0 [short|full]" >&2 && exit 2 ;;
esac
read -r -a PORTS <<<"${ROLLING_REPLACE_PORTS:-4761 4762 4763}"
[[ ${#PORTS[@]} -eq 3 ]] || { echo "ROLLING_REPLACE_PORTS must name three ports" >&2; exit 2; }
drill_begin rolling_replace "${ROLLING_REPLACE_KEEP:-}"
COPY="$WORK/build" HOST="$WORK/build/examples/host_app" LOAD="$WORK/load" LOAD_PID="" STARTED=()
TAG="$$_$RANDOM"
NAMES=("replace_a_$TAG@127.0.0.1" "replace_b_$TAG@127.0.0.1" "replace_c_$TAG@127.0.0.1")
export RELEASE_DISTRIBUTION=name RELEASE_COOKIE="rolling_replace_$TAG" PHX_SERVER=true
export SECRET_KEY_BASE="rolling-replace-check-key-base-0123456789-0123456789-0123456789-0"
[[ -z ${ROLLING_REPLACE_KEEP:-} ]] || echo "the work directory, kept: $WORK"

ok() { echo "ok   $*"; }
fail() { echo "FAIL $*" && exit 1; }
step() { printf '\n== %s (%ds)\n' "$*" "$SECONDS"; }
now_us() { date +%s%6N; }
sha() { sha256sum "$1" | cut -d' ' -f1; }

# drill_stop STATUS: on failure, what the nodes and the load said; then every node stopped
# (drill_cleanup runs it with errexit off, and kills whatever is left).
drill_stop() {
  local i
  [[ -z $LOAD_PID ]] || kill "$LOAD_PID" 2>/dev/null
  if [[ $1 -ne 0 ]]; then
    for i in "${STARTED[@]}"; do grep -h -A20 '\[error\]' "$WORK/node_$i"/tmp/log/erlang.log.* 2>/dev/null | tail -40; done
    tail -40 "$WORK/load.out" 2>/dev/null
  fi
  for i in "${STARTED[@]}"; do stop_node "$i"; done
}
trap 'printf "\nFAIL: line %s: %s\n" "$LINENO" "$BASH_COMMAND" >&2' ERR

# on I CMD...: `bin/host_app CMD...` of node I, in its directory, with its name and port.
on() { (cd "$WORK/node_$1" && RELEASE_NODE="${NAMES[$1]}" PORT="${PORTS[$1]}" bin/host_app "${@:2}"); }

# start_node I: node I as a daemon that names its node on every response; its OS pid in WORK/pid_I.
start_node() {
  STARTED+=("$1")
  HOST_APP_SERVED_BY_HEADERS=1 on "$1" daemon || fail "${NAMES[$1]} did not start"
  for _ in $(seq 1 100); do on "$1" pid >"$WORK/pid_$1" 2>/dev/null && break; sleep 0.2; done
  [[ $(cat "$WORK/pid_$1") =~ ^[0-9]+$ ]] || fail "${NAMES[$1]}: no OS pid"
}

# stop_node I: the host application stopped (the endpoint closes its listener, the pool its
# connections), then the VM halted (`bin/host_app stop` would unload every module, one by one,
# first: seconds more on a loaded machine); killed after 30 s; returns once the VM is gone.
stop_node() {
  local pid n
  pid=$(cat "$WORK/pid_$1" 2>/dev/null || true)
  on "$1" rpc 'Application.stop(:host_app); System.halt()' >/dev/null 2>&1 || true
  for n in $(seq 1 350); do
    [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 0
    [[ $n -ne 300 ]] || kill -KILL "$pid" 2>/dev/null || true
    sleep 0.1
  done
}

# digest_of I: the x-policy-digest of node I's 200 to the attempts page ("" without one).
digest_of() {
  curl -s -D - -o /dev/null "http://127.0.0.1:${PORTS[$1]}/api/repositories/acme-widgets/attempts" |
    tr -d '\r' | awk '/^HTTP/ { ok = $2 == 200 } ok && /^x-policy-digest: / { print $2 }'
}

# health I DIGEST: wait (30 s at most) until node I answers the attempts page with DIGEST.
health() {
  for _ in $(seq 1 150); do [[ $(digest_of "$1") == "$2" ]] && return; sleep 0.2; done
  fail "${NAMES[$1]} does not answer with digest ${2:0:16}…"
}

# rotate GEN PORT...: the ports in rotation from now on; returns once the load has drained the others.
rotate() {
  echo "$*" >"$LOAD/rotation.new" && mv "$LOAD/rotation.new" "$LOAD/rotation"
  for _ in $(seq 1 3000); do
    [[ -e $LOAD/ack_$1 ]] && return
    kill -0 "$LOAD_PID" 2>/dev/null || fail "the load stopped: $(tail -5 "$WORK/load.out")"
    sleep 0.01
  done
  fail "the load did not take rotation $1"
}

# gate NAME CANDIDATE: the gate on A and CANDIDATE; output in WORK/gate_NAME.{out,err}, the
# receipt in LOAD/gate_NAME.json; prints "EXIT VERDICT DEPLOYED_DIGEST CANDIDATE_DIGEST WIDENS NARROWS".
gate() {
  local status=0
  (cd "$HOST" && MIX_ENV=prod mix openagents_policy.gate "$WORK/a" "$2" --format json) \
    >"$WORK/gate_$1.out" 2>"$WORK/gate_$1.err" || status=$?
  sed -n '/^{/,$p' "$WORK/gate_$1.out" >"$LOAD/gate_$1.json"
  elixir -pa "$HOST/_build/prod/lib/jason/ebin" -e '
    [file, status] = System.argv()
    r = with {:ok, r} <- Jason.decode(File.read!(file)), do: r, else: (_ -> %{})
    IO.puts(Enum.join([status, r["verdict"], r["deployed"]["digest"], r["candidate"]["digest"],
      r["counts"]["widens"], r["counts"]["narrows"]], " "))' "$LOAD/gate_$1.json" "$status"
}

# core TIER: the copy's terminal_commit rule set to TIER, and the decision document of that core.
core() {
  sed -i -E "s/Field::new\(\"terminal_commit\", [A-Za-z]+,/Field::new(\"terminal_commit\", $1,/" \
    "$COPY/native/openagents_policy/src/disclosure.rs"
  grep -q "Field::new(\"terminal_commit\", $1," "$COPY/native/openagents_policy/src/disclosure.rs" ||
    fail "the core edit ($1) did not apply"
  # The crate that holds the core's `decisions` example (openagents_policy, or its own crate).
  local example
  example=$(find "$COPY/native" -path '*/examples/decisions.rs' | head -1)
  [[ -n $example ]] || fail "no decisions example in the core's crates"
  (cd "$COPY" && cargo run -q --locked -p "$(basename "${example%/examples/decisions.rs}")" --example decisions -- document)
}

build() { (cd "$HOST" && rm -rf _build/prod/rel && MIX_ENV=prod mix release --quiet) && cp -a "$HOST/_build/prod/rel/host_app" "$1"; }

step "1. release A, candidate B (terminal_commit ledger -> glass, 0.1.1), document W (-> pulse)"
: "${DATABASE_URL:=$("$DRILLS/postgres.sh" start)}"
DATABASE_URL="${DATABASE_URL%/*}/$(basename "${DATABASE_URL%%\?*}")_rolling_replace"
export DATABASE_URL
drill_point postgres
grep -q '@version "0.1.0"' "$ROOT/mix.exs" || fail "the library in the checkout is not version 0.1.0"
# One copy for both (a module may hold its source path: A and B differ only by
# the change), seeded with the checkout's prod build and cargo's release builds.
mkdir -p "$COPY" "$LOAD" "$WORK/target"
tar -C "$ROOT" --exclude=./.git --exclude=./target --exclude=./_build --exclude=./deps --exclude=./doc \
  --exclude=./dist --exclude=./checksum-Elixir.OpenAgentsPolicy.Native.exs --exclude=./examples/host_app/_build \
  -cf - . | tar -C "$COPY" -xf -
[[ ! -d $APP/_build/prod ]] || { mkdir -p "$HOST/_build" && cp -a "$APP/_build/prod" "$HOST/_build/"; }
[[ ! -d ${CARGO_TARGET_DIR:-$ROOT/target}/release ]] || cp -a "${CARGO_TARGET_DIR:-$ROOT/target}/release" "$WORK/target/"
export CARGO_TARGET_DIR="$WORK/target"
build "$WORK/a" || fail "release A could not be built"
core Pulse >"$WORK/w.json" || fail "W's decision document could not be written"
core Glass >"$COPY/priv/decisions.json.new" || fail "B's decision document could not be written"
mv "$COPY/priv/decisions.json.new" "$COPY/priv/decisions.json"
sed -i 's/@version "0.1.0"/@version "0.1.1"/' "$COPY/mix.exs"
sed -i 's/version: "0.1.0",/version: "0.1.1",/' "$HOST/mix.exs"
cat "$HOST/mix.exs" "$COPY/mix.exs" | grep -c -E '^ +(version: |@version )"0.1.1"' | grep -qx 2 || fail "no version bump"
build "$WORK/b" || fail "candidate B could not be built"
DIGEST_A=$(sha "$WORK/a/lib/openagents_policy-0.1.0/priv/decisions.json")
DIGEST_B=$(sha "$WORK/b/lib/openagents_policy-0.1.1/priv/decisions.json")
DIGEST_W=$(sha "$WORK/w.json")
[[ $DIGEST_A != "$DIGEST_B" && $DIGEST_A != "$DIGEST_W" ]] || fail "B's or W's decision document is A's"
echo "$DIGEST_B" >"$LOAD/digest_b"
ok "A (0.1.0, digest ${DIGEST_A:0:16}…), B (0.1.1, ${DIGEST_B:0:16}…) and W's document (${DIGEST_W:0:16}…)"

step "2. three nodes of A (ports ${PORTS[*]}), one database, under load ($CLIENTS clients)"
for i in 0 1 2; do
  drill_port_free "${PORTS[$i]}" ROLLING_REPLACE_PORTS
  cp -a "$WORK/a" "$WORK/node_$i"
done
on 0 eval 'Application.load(:host_app); OpenAgents.Repo.__adapter__().storage_down(OpenAgents.Repo.config())' >/dev/null
on 0 eval 'HostApp.Release.migrate(); HostApp.Release.seed()' >/dev/null || fail "the database was not made"
for i in 0 1 2; do start_node "$i"; done
for i in 0 1 2; do health "$i" "$DIGEST_A"; done
elixir -pa "$HOST/_build/prod/lib/jason/ebin" "$DRILLS/rolling_replace_load.exs" \
  --ports "$(IFS=, && echo "${PORTS[*]}")" --dir "$LOAD" --clients "$CLIENTS" >"$WORK/load.out" 2>&1 &
LOAD_PID=$!
for _ in $(seq 1 300); do [[ -e $LOAD/ready ]] && break; sleep 0.1; done
[[ -e $LOAD/ready && $(cat "$LOAD/digest_a") == "$DIGEST_A" ]] || fail "the load did not start: $(cat "$WORK/load.out")"
ok "three nodes on A (OS pids $(cat "$WORK"/pid_? | paste -sd' ')); the load reads them all"
drill_point nodes
sleep "$PHASE"

step "3. the gate, before any node is touched: B passes, W is refused"
read -r status verdict deployed candidate widens narrows <<<"$(gate b "$WORK/b")"
[[ $status == 0 && $deployed == "$DIGEST_A" && $candidate == "$DIGEST_B" && $widens == 0 && $narrows -gt 0 ]] ||
  fail "the gate on B: exit $status, $verdict, $widens widen, $narrows narrow: $(cat "$WORK"/gate_b.*)"
ok "gate A -> B: exit 0, $verdict, $narrows narrowing, none widening"
read -r status verdict _ candidate widens _ <<<"$(gate w "$WORK/w.json")"
grep -q "accept.*$DIGEST_W" "$WORK"/gate_w.* || fail "the gate's refusal does not name W's sha256 to accept"
[[ $status == 1 && $candidate == "$DIGEST_W" && $widens -gt 0 ]] ||
  fail "the gate on W: exit $status, $verdict, $widens widen: $(cat "$WORK"/gate_w.*)"
printf '{"candidate":{"exit":0,"receipt":%s},"widening":{"exit":%s,"sha256":"%s","receipt":%s}}\n' \
  "$(cat "$LOAD/gate_b.json")" "$status" "$DIGEST_W" "$(cat "$LOAD/gate_w.json")" >"$LOAD/gate.json"
for i in 0 1 2; do
  [[ $(on "$i" pid) == $(cat "$WORK/pid_$i") && $(digest_of "$i") == "$DIGEST_A" ]] || fail "${NAMES[$i]} changed"
done
ok "gate A -> W: exit 1, $verdict, $widens widening, W's sha256 named to accept; every node's OS pid and digest as before"

step "4. B replaces the nodes, one at a time"
for i in 0 1 2; do
  rest=("${PORTS[@]:0:i}" "${PORTS[@]:i+1}")
  t_out=$(now_us) && rotate "$((2 * i + 1))" "${rest[@]}" && t_drained=$(now_us)
  [[ $i -ne 0 ]] || echo "$t_drained" >"$LOAD/window_start"
  pid_a=$(cat "$WORK/pid_$i")
  stop_node "$i" && t_stopped=$(now_us)
  rm -rf "$WORK/node_$i" && cp -a "$WORK/b" "$WORK/node_$i"
  start_node "$i" && health "$i" "$DIGEST_B" && t_answering=$(now_us)
  [[ $i -ne 2 ]] || echo "$t_answering" >"$LOAD/window_end"
  rotate "$((2 * i + 2))" "${PORTS[@]}"
  printf '{"name":"%s","port":%s,"os_pid_a":%s,"os_pid_b":%s,"out_of_rotation_us":%s,"drained_us":%s,"stopped_us":%s,"answering_on_b_us":%s,"in_rotation_us":%s}\n' \
    "${NAMES[$i]}" "${PORTS[$i]}" "$pid_a" "$(cat "$WORK/pid_$i")" "$t_out" "$t_drained" "$t_stopped" "$t_answering" "$(now_us)" >>"$LOAD/nodes"
  ok "${NAMES[$i]}: drained in $(((t_drained - t_out) / 1000)) ms, A (OS pid $pid_a) stopped in" \
    "$(((t_stopped - t_drained) / 1000)) ms, B (OS pid $(cat "$WORK/pid_$i")) answering $(((t_answering - t_stopped) / 1000)) ms later"
done
sleep "$PHASE"

step "5. the load, judged"
touch "$LOAD/stop"
status=0
wait "$LOAD_PID" || status=$?
LOAD_PID=""
cat "$WORK/load.out"
[[ -z ${ROLLING_REPLACE_RECORD:-} ]] || { cp "$LOAD/record.json" "$ROLLING_REPLACE_RECORD" && ok "record: $ROLLING_REPLACE_RECORD"; }
[[ $status -eq 0 ]] || fail "the load's checks (above)"
echo "$(cat "$LOAD/line"), $SECONDS s in all"
