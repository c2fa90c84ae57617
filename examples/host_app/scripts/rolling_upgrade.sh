#!/usr/bin/env bash
# Hot upgrades the way the app rolls them: a cluster of three host releases
# on 127.0.0.1, upgraded one node at a time under load, and a fingerprint to
# compare the nodes by.
#   1. builds release A (library 0.1.0) and release B (library 0.1.1, one
#      core decision changed: an attempt's terminal_commit moves from ledger
#      to glass; library and host versions bumped) with the relup A -> B, as
#      scripts/hot_upgrade.sh does, and computes B's decision digest from
#      B's own library in a fresh VM (before any node runs it);
#   2. lays out three nodes, each its own copy of A (release_handler keeps
#      its state under the release root), its own HTTP port and node name,
#      one cookie, one PostgreSQL database (migrated and seeded once); starts
#      them as daemons and connects them by Erlang distribution;
#   3. runs the load (scripts/rolling_upgrade_load.exs): the five readers'
#      attempts page, round-robin over the three nodes, every response
#      naming its node and decision digest (x-served-by-node,
#      x-policy-digest);
#   4. the coordinator (scripts/rolling_coordinate.sh) upgrades A -> B one
#      node at a time (unpack, HostApp.Upgrade.install, commit; then the
#      node permanent on B, same OS pid, B's fingerprint, the others still
#      on A's), B's decisions printed first (a narrowing: no one's word
#      needed); then brings the cluster back B -> A the same way, which
#      widens (terminal_commit back to ledger readers): refused first, no
#      node touched, then rolled out with OPENAGENTS_POLICY_ACCEPT_WIDENING
#      naming A's decision digest;
#   5. judges the load: no request failed, every answer the answer of the
#      version that served it, none above that version's tier; the mixed
#      windows' length and the answers per version in them;
#   6. the drill: B removed from every node, then B' (B's tarball with its
#      NIF library cut short, so OpenAgentsPolicy.Upgrade.check refuses it
#      before the relup's point_of_no_return) rolled out the same way: the
#      coordinator must stop on the first node, non-zero, naming it and the
#      reason; that node still serves A with its OS pid unchanged; the other
#      two untouched (B' not even unpacked there); then B'' (B's tarball with
#      a decision document of the first format, which A's library does not
#      read) refused by the coordinator itself, exit 3, no node changed;
#   7. the kill drill: B back in place of B', a second load (the same
#      readers, round-robin; --kill-drill), and the coordinator rolls A -> B
#      again; the first node done, the second is killed (kill -9 to its VM)
#      inside its install: once the coordinator's rpc of
#      HostApp.Upgrade.install has begun (its ROLLING_MARKS start file), the
#      moment the library's check VM is seen running (a beam.smp under the
#      node's erl_child_setup: OpenAgentsPolicy.Upgrade.check/3, which the
#      relup runs before its point_of_no_return; polled every 10 ms), so
#      before anything of B is loaded and long before Castle.commit. Then:
#      the coordinator exits non-zero within seconds, its line naming the
#      node going down during its install; the node's port refuses
#      connections; the other two keep their OS pid, fingerprint and
#      releases (the first on B, the third on A); the node restarted as a
#      release restarts (bin/host_app daemon, the environment of its first
#      start) comes back on the release that was permanent (0.1.0
#      permanent, 0.1.1 unpacked in :release_handler.which_releases/0; A's
#      fingerprint; bin/host_app version names 0.1.0); the same coordinator
#      run again resumes (the first node skipped as done) to every node
#      permanent on B. The load, judged per node: the other two 0 failed;
#      the killed node's requests refused while it was down or cut by the
#      kill (in flight), none failed, hung or answered wrongly.
#      ROLLING_KILL_DRILL=0 leaves it out.
# Every node starts with HOST_APP_SERVED_BY_HEADERS=1 (the headers the load
# reads are on only where a release is started with it) and TMPDIR in the
# run's directory. One line per check ("ok  ..." / "FAIL ..."); exit 1 on the
# first failure.
#
#   scripts/rolling_upgrade.sh [full|short]
#
# `short` (what `make check` runs when ROLLING_UPGRADE=short) loads for a
# second per phase with five clients instead of five seconds with ten; both
# run the kill drill.
# DATABASE_URL names the PostgreSQL server (unset: scripts/postgres.sh starts
# one); the database is its name with _rolling_upgrade appended, made afresh.
# ROLLING_UPGRADE_PORTS: the three nodes' HTTP ports (default "4761 4762
# 4763"). ROLLING_UPGRADE_RECORD=PATH writes the run as JSON: `nodes` (each
# install: name, OS pid before/after, fingerprint before/after, install time),
# `responses` (every response: time, node and digest from its headers,
# status), `windows`, `drill`, `kill_drill` (node, permanent_before,
# restarted_release, coordinator_exit, others_untouched, failed_on_others,
# the kill point, timeline_ms in epoch ms, requests per node and window, the
# drill's responses; null with ROLLING_KILL_DRILL=0), `decision_diff` (up and
# down, as OpenAgentsPolicy.Decisions renders JSON). ROLLING_UPGRADE_KEEP=1 keeps the work
# directory. Every daemon and load it starts is stopped on exit.
# What it shares with scripts/hot_upgrade.sh (building A and B, the daemons,
# the load, the check lines) is scripts/lib/upgrade.sh.
set -euo pipefail

# shellcheck source=lib/upgrade.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/upgrade.sh"
upgrade_mode "$@"
read -r -a PORTS <<<"${ROLLING_UPGRADE_PORTS:-4761 4762 4763}"
KILL_DRILL=${ROLLING_KILL_DRILL:-1}
[[ $KILL_DRILL == [01] ]] || { echo "ROLLING_KILL_DRILL must be 0 or 1" >&2; exit 2; }
[[ ${#PORTS[@]} -eq 3 ]] || { echo "ROLLING_UPGRADE_PORTS must name three ports" >&2; exit 2; }
WORK="$(mktemp -d "${TMPDIR:-/tmp}/rolling_upgrade.XXXXXX")"
COPY="$WORK/build"
LOAD_DIR="$WORK/load"
LOAD_PID=""
COORD_PID=""
CHECK_VM=""
WATCH_PID=""
TAG="$$_$RANDOM"
NAMES=("rolling_a_$TAG@127.0.0.1" "rolling_b_$TAG@127.0.0.1" "rolling_c_$TAG@127.0.0.1")
DIRS=("$WORK/node_a" "$WORK/node_b" "$WORK/node_c")
STARTED=()
export RELEASE_DISTRIBUTION=name RELEASE_COOKIE="rolling_upgrade_$TAG"
export SECRET_KEY_BASE="rolling-upgrade-check-key-base-0123456789-0123456789-0123456789-01"
export ROLLING_NODES_LOG="$WORK/nodes.jsonl" ROLLING_MARKS="$LOAD_DIR"

cleanup() {
  local status=$? i
  if [[ -n $LOAD_PID ]]; then kill "$LOAD_PID" 2>/dev/null || true; fi
  # The kill drill's coordinator runs under timeout(1), which leads its own
  # process group: the coordinator and the rpc VMs it started go with it.
  if [[ -n $COORD_PID ]]; then kill -KILL -- "-$COORD_PID" 2>/dev/null || true; fi
  if [[ -n $WATCH_PID ]]; then kill "$WATCH_PID" 2>/dev/null || true; fi
  if [[ -n $CHECK_VM ]]; then kill -KILL "$CHECK_VM" 2>/dev/null || true; fi
  if [[ $status -ne 0 ]]; then
    for i in "${STARTED[@]}"; do
      echo "---- ${NAMES[$i]}'s errors and warnings:"
      cat "${DIRS[$i]}"/tmp/log/erlang.log.* 2>/dev/null | grep -A20 -E '\[(error|warning|warn)\]' | tail -60 || true
    done
    cat "$WORK/load.out" 2>/dev/null | tail -40 || true
  fi
  for i in "${STARTED[@]}"; do
    RELEASE_NODE="${NAMES[$i]}" stop_release "${DIRS[$i]}" "$(cat "$WORK/pid_$i" 2>/dev/null || true)"
  done
  if [[ -n ${ROLLING_UPGRADE_KEEP:-} ]]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

upgrade_env rolling_upgrade
on() { # on I CMD...: bin/host_app CMD on node I
  local i=$1
  shift
  (cd "${DIRS[$i]}" && RELEASE_NODE="${NAMES[$i]}" PORT="${PORTS[$i]}" bin/host_app "$@")
}
# start_node I: node I started as a release starts (`bin/host_app daemon`), at
# first and after the kill alike: with the served-by headers the load reads
# (HOST_APP_SERVED_BY_HEADERS=1) and a temporary directory of the run's own
# (TMPDIR, where the library's check makes its directory: one left by a node
# killed during its check goes with the run).
start_node() {
  HOST_APP_SERVED_BY_HEADERS=1 TMPDIR="$WORK/tmp" start_daemon on "$1"
}
digest_of() { on "$1" rpc 'IO.puts(OpenAgentsPolicy.fingerprint().decision_digest)' | tr -d '[:space:]'; }
pid_of() { on "$1" pid | tr -d '[:space:]'; }
# status_of I: "OS_PID VERSION DECISION_DIGEST NIF_SHA256 VSN:STATUS..." of node I, as the coordinator reads it.
status_of() {
  on "$1" rpc 'f = OpenAgentsPolicy.fingerprint()
    rels = Enum.map_join(:release_handler.which_releases(), " ", fn {_, v, _, s} -> "#{v}:#{s}" end)
    IO.puts("#{System.pid()} #{f.version} #{f.decision_digest} #{f.nif.sha256} #{rels}")' | tr -d '\r'
}
coordinate() { # coordinate PHASE VSN FROM TO
  ROLLING_PHASE=$1 "$APP/scripts/rolling_coordinate.sh" "$2" "$3" "$4" \
    "${NAMES[0]}=${DIRS[0]}" "${NAMES[1]}=${DIRS[1]}" "${NAMES[2]}=${DIRS[2]}"
}

step "1. releases A (library 0.1.0) and B (0.1.1, one core decision changed), the relup A -> B"
# One build directory for both, seeded with what the checkout built (see
# seed_copy in lib/upgrade.sh for why).
seed_copy "$COPY" "$WORK/target"
mkdir -p "$LOAD_DIR" "$WORK/tmp"
HOST="$COPY/examples/host_app"
build_release "$HOST"
cp -a "$HOST/_build/prod/rel/host_app" "$WORK/a"
ok "release A built: host_app 0.1.0 with openagents_policy 0.1.0"

edit_b "$COPY"
build_release "$HOST"
REL_B="$HOST/_build/prod/rel/host_app"
build_relup "$HOST" "$WORK/a"
TAR_B="$HOST/_build/prod/host_app-0.1.1.tar.gz"
ok "release B built, with the relup A -> B in its tarball"

# B's decision digest from B's own library, loaded in a fresh VM: what every
# node must report once it runs B (and a digest that is not A's).
decision_digest_of() { # the decision digest of the library under release root $1, version $2
  local elixir
  elixir=$(dirname "$(find "$1/lib" -path '*/elixir-*/ebin/elixir.app')")
  erl -noshell -pa "$elixir" -pa "$1/lib/openagents_policy-$2/ebin" \
    -eval "io:put_chars('Elixir.OpenAgentsPolicy.Native':decision_digest()), halt()."
}
DIGEST_A=$(decision_digest_of "$WORK/a" 0.1.0)
DIGEST_B=$(decision_digest_of "$REL_B" 0.1.1)
[[ $DIGEST_A =~ ^[0-9a-f]{64}$ && $DIGEST_B =~ ^[0-9a-f]{64}$ && $DIGEST_A != "$DIGEST_B" ]] ||
  fail "decision digests: A '$DIGEST_A', B '$DIGEST_B'"
echo "$DIGEST_B" >"$LOAD_DIR/digest_b"
ok "decision digests, each from its own library: A ${DIGEST_A:0:16}…, B ${DIGEST_B:0:16}…"

step "2. three nodes of A on 127.0.0.1 (ports ${PORTS[*]}), one database, connected"
for i in 0 1 2; do
  cp -a "$WORK/a" "${DIRS[$i]}"
  cp "$TAR_B" "${DIRS[$i]}/releases/"
  port_free "${PORTS[$i]}" ROLLING_UPGRADE_PORTS
  PORT=${PORTS[$i]} castle_sys_config "${DIRS[$i]}" 0.1.0 >/dev/null
done
fresh_database on 0 >/dev/null
for i in 0 1 2; do
  STARTED+=("$i")
  start_node "$i"
done
for i in 0 1 2; do
  wait_http "${PORTS[$i]}" 150
  pid_of "$i" >"$WORK/pid_$i"
  [[ $(cat "$WORK/pid_$i") =~ ^[0-9]+$ ]] || fail "${NAMES[$i]}: no OS pid"
done
on 0 rpc "IO.inspect({Node.connect(:\"${NAMES[1]}\"), Node.connect(:\"${NAMES[2]}\")})" >/dev/null
for i in 0 1 2; do
  seen=$(on "$i" rpc 'IO.puts(length(Node.list()))' | tr -d '[:space:]')
  [[ $seen == 2 ]] || fail "${NAMES[$i]} sees $seen other nodes, not 2"
  [[ $(digest_of "$i") == "$DIGEST_A" ]] || fail "${NAMES[$i]} does not report A's digest"
done
ok "three nodes up (OS pids $(for i in 0 1 2; do cat "$WORK/pid_$i"; echo; done | paste -sd' ')), each connected to the other two, each on A's digest"

step "3. load: the five readers, round-robin over the three nodes, $CLIENTS clients"
JASON_EBIN="$HOST/_build/prod/lib/jason/ebin"
start_load "$WORK/load.out" "$LOAD_DIR" elixir -pa "$JASON_EBIN" "$APP/scripts/rolling_upgrade_load.exs" \
  --ports "$(IFS=, && echo "${PORTS[*]}")" --dir "$LOAD_DIR" --clients "$CLIENTS"
[[ $(cat "$LOAD_DIR/digest_a") == "$DIGEST_A" ]] || fail "the load's A digest is not A's"
ok "load running; every node answered every reader alike (A)"
sleep "$PHASE"

step "4. the coordinator: A -> B, one node at a time"
now_us >"$LOAD_DIR/up_start"
ROLLING_DIFF_LOG="$WORK/diff_up.json" coordinate up 0.1.1 "$DIGEST_A" "$DIGEST_B" ||
  fail "the rollout A -> B stopped (above)"
now_us >"$LOAD_DIR/up_end"
ok "A -> B: every node permanent on 0.1.1, same OS pids, B's digest"
sleep "$PHASE"

step "4'. the coordinator: B -> A, refused while A's decisions widen, then accepted by name"
# Back to A shows terminal_commit to ledger readers again: a widening. The
# coordinator refuses it before touching any node, naming what widens.
refused_status=0
refused_out=$(ROLLING_DIFF_LOG="$WORK/diff_down.json" coordinate down 0.1.0 "$DIGEST_B" "$DIGEST_A" 2>&1) ||
  refused_status=$?
echo "$refused_out" | sed 's/^/     /'
[[ $refused_status -eq 3 && $refused_out == *"coordinator: REFUSED 0.1.0: its decisions widen"* ]] ||
  fail "the coordinator did not refuse A's widening decisions (exit $refused_status)"
[[ $refused_out == *"widens: \`attempt.terminal_commit\`"* ]] || fail "the refusal does not name terminal_commit"
for i in 0 1 2; do
  [[ $(pid_of "$i") == $(cat "$WORK/pid_$i") && $(digest_of "$i") == "$DIGEST_B" ]] ||
    fail "${NAMES[$i]} was touched by the refused rollout"
done
ok "B -> A refused (exit 3) before any node changed: A's decisions widen terminal_commit; every node still on B, same pids"
now_us >"$LOAD_DIR/down_start"
OPENAGENTS_POLICY_ACCEPT_WIDENING="$DIGEST_A" ROLLING_DIFF_LOG="$WORK/diff_down.json" \
  coordinate down 0.1.0 "$DIGEST_B" "$DIGEST_A" || fail "the rollout B -> A stopped (above)"
now_us >"$LOAD_DIR/down_end"
ok "B -> A: every node permanent on 0.1.0, same OS pids, A's digest"
sleep "$PHASE"

step "5. the load, judged by the version that served each answer"
judge_load "$WORK/load.out" "$LOAD_DIR"

step "6. the drill: B' (B's NIF library cut short) refused on the first node"
for i in 0 1 2; do
  out=$(on "$i" rpc 'Castle.remove("0.1.1")')
  [[ $out == "Removed 0.1.1."* ]] || fail "${NAMES[$i]}: remove 0.1.1: $out"
done
mkdir -p "$WORK/b_prime"
tar -C "$WORK/b_prime" -xzf "$TAR_B"
so=("$WORK"/b_prime/lib/openagents_policy-0.1.1/priv/native/$NIF)
[[ ${#so[@]} -eq 1 && -f ${so[0]} ]] || fail "B's tarball does not carry one $NIF: ${so[*]}"
head -c 65536 "${so[0]}" >"$WORK/cut.so" && mv "$WORK/cut.so" "${so[0]}"
# Entries named as release_handler looks them up (lib/..., releases/...).
(cd "$WORK/b_prime" && tar -czf "$WORK/host_app-0.1.1.tar.gz" -- *)
for i in 0 1 2; do cp "$WORK/host_app-0.1.1.tar.gz" "${DIRS[$i]}/releases/host_app-0.1.1.tar.gz"; done
ok "B' made: B's tarball with ${so[0]#"$WORK"/b_prime/} cut to 64 KiB, in every node's releases/"
drill_status=0
drill_out=$(ROLLING_NODES_LOG="$WORK/drill.jsonl" coordinate drill 0.1.1 "$DIGEST_A" "$DIGEST_B" 2>&1) || drill_status=$?
echo "$drill_out" | sed 's/^/     /'
[[ $drill_status -ne 0 ]] || fail "the coordinator rolled B' out"
[[ $drill_out == *"coordinator: STOPPED at ${NAMES[0]}: install of 0.1.1 refused"*does_not_load* ]] ||
  fail "the coordinator did not stop at ${NAMES[0]} on does_not_load"
ok "the coordinator exited $drill_status, stopped at ${NAMES[0]}: the library's check refused B' (does_not_load)"
for i in 0 1 2; do
  on "$i" rpc 'f = OpenAgentsPolicy.fingerprint(); IO.puts("#{f.version} #{f.decision_digest} #{f.nif.sha256}")' |
    tr -d '\r' >"$WORK/drill_after_$i"
  [[ $(pid_of "$i") == $(cat "$WORK/pid_$i") ]] || fail "${NAMES[$i]}'s OS pid changed"
  cp "$WORK/pid_$i" "$WORK/drill_pid_$i"
  [[ $(digest_of "$i") == "$DIGEST_A" ]] || fail "${NAMES[$i]} no longer reports A's digest"
  served=$(curl -s -D - -o /dev/null -H 'authorization: Bearer member' \
    "http://127.0.0.1:${PORTS[$i]}/api/repositories/acme-widgets/attempts" | tr -d '\r' |
    sed -n 's/^x-policy-digest: //p')
  [[ $served == "$DIGEST_A" ]] || fail "${NAMES[$i]} serves digest $served, not A's"
done
rels=$(on 0 rpc 'IO.puts(Enum.map_join(:release_handler.which_releases(), " ", fn {_, v, _, s} -> "#{v}:#{s}" end))')
[[ $rels == *"0.1.0:permanent"* ]] || fail "${NAMES[0]}'s releases after the drill: $rels"
for i in 1 2; do
  r=$(on "$i" rpc 'IO.puts(Enum.map_join(:release_handler.which_releases(), " ", fn {_, v, _, s} -> "#{v}:#{s}" end))')
  [[ $r != *0.1.1* ]] || fail "${NAMES[$i]} was touched by the drill: $r"
done
ok "after the drill: ${NAMES[0]} still serves A (0.1.0 permanent; $rels), same OS pid; the other two untouched (0.1.1 never unpacked there), all on A's digest and pids"

# B'': B's tarball whose decision document is of the first format, which
# A's library does not read: refused before any node is touched.
out=$(on 0 rpc 'Castle.remove("0.1.1")')
[[ $out == "Removed 0.1.1."* ]] || fail "${NAMES[0]}: remove B' (0.1.1): $out"
tar -C "$WORK/b_prime" -xzf "$TAR_B"
echo '{"format":1,"vocabularies":[]}' >"$WORK/b_prime/lib/openagents_policy-0.1.1/priv/decisions.json"
(cd "$WORK/b_prime" && tar -czf "$WORK/host_app-0.1.1.tar.gz" -- *)
for i in 0 1 2; do cp "$WORK/host_app-0.1.1.tar.gz" "${DIRS[$i]}/releases/host_app-0.1.1.tar.gz"; done
format_status=0
format_out=$(coordinate drill 0.1.1 "$DIGEST_A" "$DIGEST_B" 2>&1) || format_status=$?
echo "$format_out" | sed 's/^/     /'
[[ $format_status -eq 3 && $format_out == *"coordinator: REFUSED 0.1.1: ${NAMES[0]} cannot compare its decisions"*"format 1"* ]] ||
  fail "the coordinator did not refuse B'' (a decision document of format 1): exit $format_status"
for i in 0 1 2; do
  [[ $(digest_of "$i") == "$DIGEST_A" && $(pid_of "$i") == $(cat "$WORK/pid_$i") ]] || fail "${NAMES[$i]} changed after B''"
done
ok "B'' (its decision document of format 1) refused before any node changed: exit 3, every node on A, same pids"

if [[ $KILL_DRILL == 1 ]]; then
step "7. the kill drill: ${NAMES[1]} killed (kill -9) during its install of B, restarted, the rollout resumed"
KILL_DRILL_START=$SECONDS
# B back in place of B': B' is unpacked on the first node only (its tarball,
# in the others' releases/, was never unpacked there).
out=$(on 0 rpc 'Castle.remove("0.1.1")')
[[ $out == "Removed 0.1.1."* ]] || fail "${NAMES[0]}: remove B' (0.1.1): $out"
for i in 0 1 2; do cp "$TAR_B" "${DIRS[$i]}/releases/host_app-0.1.1.tar.gz"; done
KILL_DIR="$WORK/load_kill"
K=1 # the node killed: the second, so the cluster is mixed when it dies (the first on B, the third on A)
mkdir -p "$KILL_DIR"
echo "$DIGEST_B" >"$KILL_DIR/digest_b"
echo "${PORTS[$K]}" >"$KILL_DIR/killed_port"
# Before the drill: the node to be killed and the third (the first is
# checked against the coordinator's own word once it is done).
status_of "$K" >"$WORK/kill_before_$K" &
before=$!
status_of 2 >"$WORK/kill_before_2"
wait "$before" || fail "${NAMES[$K]}'s status could not be read before the drill"
permanent_before=$(tr ' ' '\n' <"$WORK/kill_before_$K" | sed -n 's/:permanent$//p')
[[ $permanent_before == 0.1.0 ]] || fail "${NAMES[$K]}'s permanent release before the drill: '$permanent_before'"
start_load "$WORK/load_kill.out" "$KILL_DIR" elixir -pa "$JASON_EBIN" "$APP/scripts/rolling_upgrade_load.exs" \
  --ports "$(IFS=, && echo "${PORTS[*]}")" --dir "$KILL_DIR" --clients "$CLIENTS" --kill-drill

# The coordinator, in the background (under timeout: whatever the node does,
# it cannot hang the run), rolling A -> B from the first node.
now_us >"$KILL_DIR/drill_start"
ROLLING_PHASE=kill ROLLING_MARKS="$KILL_DIR" ROLLING_NODES_LOG="$WORK/kill.jsonl" \
  timeout -k 5 300 "$APP/scripts/rolling_coordinate.sh" 0.1.1 "$DIGEST_A" "$DIGEST_B" \
  "${NAMES[0]}=${DIRS[0]}" "${NAMES[1]}=${DIRS[1]}" "${NAMES[2]}=${DIRS[2]}" >"$WORK/kill_coordinator.out" 2>&1 &
COORD_PID=$!

# Where the kill lands: inside node K's install, before anything is made
# permanent. The coordinator writes kill_<node>_start just before its rpc of
# HostApp.Upgrade.install; inside it (gate closed, castle's sys.config
# written, release_handler evaluating the relup), the library's appup runs
# OpenAgentsPolicy.Upgrade.check/3 before the relup's point_of_no_return, and
# the check loads B's NIF library in a VM of its own: a beam.smp that the
# node's port program (erl_child_setup, its child) starts under timeout(1)
# (so the node's grandchild), and that exists only while the check runs. The kill -9 goes to the node's VM the moment
# that VM is seen (polled every 10 ms): after the install began, before the
# point of no return, long before Castle.commit.
victim=$(cat "$WORK/pid_$K")
for _ in $(seq 1 3000); do
  [[ -e $KILL_DIR/kill_${NAMES[$K]}_start ]] && break
  kill -0 "$COORD_PID" 2>/dev/null || { cat "$WORK/kill_coordinator.out"; fail "the coordinator ended before ${NAMES[$K]}'s install"; }
  sleep 0.05
done
[[ -e $KILL_DIR/kill_${NAMES[$K]}_start ]] || fail "the coordinator never began ${NAMES[$K]}'s install"
child_setup=$(pgrep -P "$victim" -x erl_child_setup || true)
[[ -n $child_setup ]] || fail "${NAMES[$K]} (OS pid $victim) has no erl_child_setup"
for _ in $(seq 1 3000); do
  CHECK_VM=$(for bound in $(pgrep -P "$child_setup" || true); do pgrep -P "$bound" -x beam.smp; done || true)
  CHECK_VM=${CHECK_VM:-$(pgrep -P "$child_setup" -x beam.smp || true)}
  [[ -n $CHECK_VM ]] && break
  [[ ! -e $KILL_DIR/kill_${NAMES[$K]}_end ]] ||
    { cat "$WORK/kill_coordinator.out"; fail "${NAMES[$K]}'s install ended before its check VM was seen"; }
  sleep 0.01
done
[[ -n $CHECK_VM ]] || fail "no check VM seen in ${NAMES[$K]}'s install"
check_cwd=$(readlink "/proc/$CHECK_VM/cwd" || true)
now_us >"$KILL_DIR/kill_at"
kill -KILL "$victim"
install_began=$(cat "$KILL_DIR/kill_${NAMES[$K]}_start")
kill_at=$(cat "$KILL_DIR/kill_at")
ok "kill -9 ${NAMES[$K]} (OS pid $victim) $(((kill_at - install_began) / 1000)) ms into its install, while the library's check VM (OS pid $CHECK_VM, in ${check_cwd:-?}) ran: before the relup's point of no return"

coord_status=0
wait "$COORD_PID" || coord_status=$?
COORD_PID=""
now_us >"$KILL_DIR/coordinator_exit"
coord_ms=$((($(cat "$KILL_DIR/coordinator_exit") - kill_at) / 1000))
sed 's/^/     /' "$WORK/kill_coordinator.out"
coord_line=$(grep -m1 '^coordinator: STOPPED at ' "$WORK/kill_coordinator.out" || true)
[[ $coord_status -ne 0 && $coord_status -ne 124 && $coord_status -ne 137 ]] ||
  fail "the coordinator exited $coord_status (124/137: it hung, stopped by timeout)"
[[ $coord_line == "coordinator: STOPPED at ${NAMES[$K]}: install of 0.1.1: the node went down during it"* ]] ||
  fail "the coordinator's last word does not name ${NAMES[$K]} going down during its install: '$coord_line'"
ok "the coordinator exited $coord_status ${coord_ms} ms after the kill, naming ${NAMES[$K]}: ${coord_line#coordinator: STOPPED at "${NAMES[$K]}": }"

! kill -0 "$victim" 2>/dev/null || fail "${NAMES[$K]}'s VM (OS pid $victim) is still running"
refused_rc=0
curl -s -o /dev/null --max-time 2 "http://127.0.0.1:${PORTS[$K]}/api/targets" || refused_rc=$?
[[ $refused_rc -eq 7 ]] || fail "port ${PORTS[$K]} after the kill: curl exit $refused_rc, not 7 (connection refused)"
ok "${NAMES[$K]} is down: its VM is gone, its port refuses connections (curl exit 7)"
# The check VM was the node's child, not linked to it: how long it outlives
# the node (the library's check is to die with its caller, issue #31 part
# 2), watched meanwhile, at most 10 s; then killed (it is this run's).
(
  for n in $(seq 1 100); do
    kill -0 "$CHECK_VM" 2>/dev/null || { echo "$((n * 100))" >"$WORK/check_vm_gone"; exit 0; }
    sleep 0.1
  done
  echo null >"$WORK/check_vm_gone"
) &
WATCH_PID=$!

# The others as they were when the kill landed: the first as the coordinator
# left it (done: its status once checked), the third as before the drill.
cp "$KILL_DIR/kill_${NAMES[0]}_state" "$WORK/kill_at_0"
cp "$WORK/kill_before_2" "$WORK/kill_at_2"
status_of 0 >"$WORK/kill_after_0" &
others=$!
status_of 2 >"$WORK/kill_after_2"
wait "$others" || fail "${NAMES[0]}'s status could not be read after the kill"
for i in 0 2; do
  [[ $(cat "$WORK/kill_after_$i") == $(cat "$WORK/kill_at_$i") ]] ||
    fail "${NAMES[$i]} changed: $(cat "$WORK/kill_at_$i") -> $(cat "$WORK/kill_after_$i")"
done
[[ $(cut -d' ' -f1 "$WORK/kill_at_0") == $(cat "$WORK/pid_0") && $(cut -d' ' -f3 "$WORK/kill_at_0") == "$DIGEST_B" ]] ||
  fail "${NAMES[0]} was not on B with its OS pid when the kill landed: $(cat "$WORK/kill_at_0")"
ok "the other two untouched: ${NAMES[0]} on B (0.1.1 permanent, OS pid $(cut -d' ' -f1 "$WORK/kill_after_0"), as the coordinator left it), ${NAMES[2]} on A (0.1.0 permanent, OS pid $(cut -d' ' -f1 "$WORK/kill_after_2"), as before the drill): OS pid, fingerprint and releases unchanged"

# Back as a release comes back: bin/host_app daemon, in the environment of the first start.
now_us >"$KILL_DIR/restart_at"
start_node "$K"
cp "$WORK/pid_$K" "$WORK/pid_${K}_killed"
# Its OS pid first (what cleanup stops), as soon as its distribution is up.
for _ in $(seq 1 150); do
  new_pid=$(pid_of "$K" 2>/dev/null || true)
  [[ $new_pid =~ ^[0-9]+$ ]] && break
  sleep 0.2
done
[[ $new_pid =~ ^[0-9]+$ ]] || fail "${NAMES[$K]} did not come back (no OS pid)"
echo "$new_pid" >"$WORK/pid_$K"
wait_http "${PORTS[$K]}" 150
curl -s -o /dev/null "http://127.0.0.1:${PORTS[$K]}/api/targets" || fail "${NAMES[$K]} does not answer HTTP after its restart"
now_us >"$KILL_DIR/back_at"
status_of "$K" >"$WORK/kill_back"
boots=$(on "$K" version | tr -d '\r')
read -r back_pid back_version back_digest back_nif back_rels <<<"$(cat "$WORK/kill_back")"
[[ $back_pid == "$new_pid" && $back_pid != "$victim" ]] || fail "${NAMES[$K]}'s OS pid after the restart: $back_pid"
[[ $back_version == 0.1.0 && $back_digest == "$DIGEST_A" ]] ||
  fail "${NAMES[$K]} came back on $back_version, digest $back_digest, not A's"
[[ " $back_rels " == *" 0.1.0:permanent "* && " $back_rels " == *" 0.1.1:unpacked "* ]] ||
  fail "${NAMES[$K]}'s releases after the restart: $back_rels (want 0.1.0 permanent, 0.1.1 unpacked)"
[[ $boots == "host_app 0.1.0" ]] || fail "${NAMES[$K]} would boot '$boots'"
served=$(curl -s -D - -o /dev/null -H 'authorization: Bearer member' \
  "http://127.0.0.1:${PORTS[$K]}/api/repositories/acme-widgets/attempts" | tr -d '\r' | sed -n 's/^x-policy-digest: //p')
[[ $served == "$DIGEST_A" ]] || fail "${NAMES[$K]} serves digest '$served', not A's"
seen=$(on "$K" rpc "Node.connect(:\"${NAMES[0]}\"); Node.connect(:\"${NAMES[2]}\"); IO.puts(length(Node.list()))" |
  tr -d '[:space:]')
[[ $seen == 2 ]] || fail "${NAMES[$K]} sees $seen other nodes after the restart, not 2"
ok "${NAMES[$K]} back $((($(cat "$KILL_DIR/back_at") - kill_at) / 1000)) ms after the kill (bin/host_app daemon; new OS pid $back_pid), on the release that was permanent: $back_rels (release_handler's which_releases: B unpacked, never installed), A's fingerprint (${back_digest:0:16}…), reconnected"

# From that state to completion: the same coordinator, run again. The first
# node is done (0.1.1 permanent, B's digest) and skipped; B is unpacked on
# the restarted node already, so its install starts at once.
now_us >"$KILL_DIR/resume_start"
resume_out=$(ROLLING_MARKS="$KILL_DIR" ROLLING_NODES_LOG="$WORK/resume.jsonl" coordinate resume 0.1.1 "$DIGEST_A" "$DIGEST_B") ||
  { echo "$resume_out"; fail "the resumed rollout stopped (above)"; }
now_us >"$KILL_DIR/resume_end"
echo "$resume_out" | grep '^coordinator: ' | sed 's/^/     /'
[[ $resume_out == *"coordinator: ${NAMES[0]} is already on 0.1.1 (permanent)"*"skipped"* ]] ||
  fail "the resumed rollout did not skip ${NAMES[0]}"
looks=()
for i in 0 1 2; do
  status_of "$i" >"$WORK/kill_end_$i" &
  looks+=("$!")
done
for i in 0 1 2; do wait "${looks[$i]}" || fail "${NAMES[$i]}'s status could not be read after the resumed rollout"; done
for i in 0 1 2; do
  read -r p v d _ r <"$WORK/kill_end_$i"
  [[ $p == $(cat "$WORK/pid_$i") && $v == 0.1.1 && $d == "$DIGEST_B" && " $r " == *" 0.1.1:permanent "* ]] ||
    fail "${NAMES[$i]} after the resumed rollout: pid $p, $v, digest ${d:0:16}, $r"
done
ok "resumed to completion in $((($(cat "$KILL_DIR/resume_end") - $(cat "$KILL_DIR/resume_start")) / 1000000)) s: every node permanent on 0.1.1, B's digest; ${NAMES[0]} and ${NAMES[2]} with their OS pids, ${NAMES[$K]} with its new one"
sleep "$PHASE"
judge_load "$WORK/load_kill.out" "$KILL_DIR"
wait "$WATCH_PID" || true
WATCH_PID=""
CHECK_VM_PID=$CHECK_VM
if [[ $(cat "$WORK/check_vm_gone") == null ]]; then
  kill -KILL "$CHECK_VM" 2>/dev/null || true
  check_vm_note="still running 10 s after the node died: killed by this script"
else
  check_vm_note="gone $(cat "$WORK/check_vm_gone") ms after the node died, at most"
fi
CHECK_VM=""
check_dirs_left=$(find "$WORK/tmp" -maxdepth 1 -name 'load_check-*' | wc -l)
ok "the check VM that ran in ${NAMES[$K]}'s install: $check_vm_note; $check_dirs_left check directory left behind by it (in the run's TMPDIR)"
printf '     the kill drill took %d s\n' "$((SECONDS - KILL_DRILL_START))"
fi

if [[ -n ${ROLLING_UPGRADE_RECORD:-} ]]; then
  [[ $KILL_DRILL == 1 ]] || K="" # no kill drill: "kill_drill": null
  DRILL_OUT="$drill_out" KD_NODE="${K:+${NAMES[$K]}}" KD_INDEX="${K:-}" KD_PERMANENT_BEFORE="${permanent_before:-}" \
    KD_BOOTS="${boots:-}" KD_COORD_STATUS="${coord_status:-}" KD_COORD_LINE="${coord_line:-}" \
    KD_CHECK_VM="${CHECK_VM_PID:-}" KD_CHECK_CWD="${check_cwd:-}" KD_CHECK_NOTE="${check_vm_note:-}" \
    KD_DIRS_LEFT="${check_dirs_left:-}" KD_RESUME_OUT="${resume_out:-}" elixir -pa "$JASON_EBIN" -e '
    [record, work, load | names] = System.argv()
    lines = fn file -> file |> File.read!() |> String.split("\n", trim: true) |> Enum.map(&Jason.decode!/1) end
    read = fn name -> work |> Path.join(name) |> File.read!() |> String.trim() end
    after_drill =
      for {name, i} <- Enum.with_index(names) do
        [version, digest, nif] = String.split(read.("drill_after_#{i}"))
        %{name: name, os_pid: String.to_integer(read.("drill_pid_#{i}")),
          fingerprint: %{version: version, decision_digest: digest, nif_sha256: nif}}
      end
    reason = System.get_env("DRILL_OUT") |> String.split("\n") |> Enum.find("", &(&1 =~ "STOPPED at"))
    [refused | _] = lines.(Path.join(work, "drill.jsonl"))
    # "PID VERSION DIGEST NIF VSN:STATUS..." as status_of prints it.
    node_state = fn file ->
      [pid, version, digest, nif | rels] = String.split(read.(file))
      %{os_pid: String.to_integer(pid), releases: Enum.join(rels, " "),
        fingerprint: %{version: version, decision_digest: digest, nif_sha256: nif}}
    end
    env = &System.get_env("KD_" <> &1)
    kill_drill =
      if env.("NODE") not in [nil, ""] do
        k = String.to_integer(env.("INDEX"))
        kd = Path.join(work, "load_kill")
        mark = fn name -> div(String.to_integer(String.trim(File.read!(Path.join(kd, name)))), 1000) end
        summary = Jason.decode!(File.read!(Path.join(kd, "summary.json")))
        back = node_state.("kill_back")
        others =
          for i <- [0, 1, 2] -- [k] do
            %{name: Enum.at(names, i), at_kill: node_state.("kill_at_#{i}"),
              after: node_state.("kill_after_#{i}")}
          end
        %{
          node: env.("NODE"),
          permanent_before: env.("PERMANENT_BEFORE"),
          restarted_release: %{
            permanent: back.releases |> String.split() |> Enum.find_value(&(String.ends_with?(&1, ":permanent") && String.trim_trailing(&1, ":permanent"))),
            which_releases: back.releases,
            boots: env.("BOOTS"),
            fingerprint: back.fingerprint,
            os_pid_killed: String.to_integer(read.("pid_#{k}_killed")),
            os_pid_restarted: back.os_pid
          },
          coordinator_exit: %{status: String.to_integer(env.("COORD_STATUS")), line: env.("COORD_LINE"),
                              after_kill_ms: mark.("coordinator_exit") - mark.("kill_at")},
          others_untouched: Enum.all?(others, &(&1.at_kill == &1.after)),
          others: others,
          failed_on_others: summary["failed_on_others"],
          failed_on_killed: summary["failed_on_killed"],
          refused_while_down: summary["refused"],
          cut_by_the_kill: summary["cut"],
          kill_point: %{
            at: "inside HostApp.Upgrade.install(\"0.1.1\"): the library check VM, started by the relup before its point_of_no_return, had started",
            install_began_ms: mark.("kill_#{env.("NODE")}_start"),
            check_vm_os_pid: String.to_integer(env.("CHECK_VM")),
            check_vm_cwd: env.("CHECK_CWD"),
            check_vm_after_the_kill: env.("CHECK_NOTE"),
            check_directories_left: String.to_integer(env.("DIRS_LEFT"))
          },
          timeline_ms: %{
            drill_start: mark.("drill_start"),
            install_began: mark.("kill_#{env.("NODE")}_start"),
            killed: mark.("kill_at"),
            coordinator_exited: mark.("coordinator_exit"),
            restart: mark.("restart_at"),
            back: mark.("back_at"),
            back_on: back.fingerprint.version,
            first_answer_after_kill: summary["first_answer_after_kill_ms"],
            resume_start: mark.("resume_start"),
            resume_end: mark.("resume_end")
          },
          requests: summary,
          coordinator: %{killed: File.read!(Path.join(work, "kill_coordinator.out")),
                         resumed: env.("RESUME_OUT"),
                         nodes: lines.(Path.join(work, "kill.jsonl")) ++ lines.(Path.join(work, "resume.jsonl"))},
          responses: Jason.decode!(File.read!(Path.join(kd, "responses.json")))
        }
      end
    File.write!(record, Jason.encode!(%{
      nodes: lines.(Path.join(work, "nodes.jsonl")),
      responses: Jason.decode!(File.read!(Path.join(load, "responses.json"))),
      summary: Jason.decode!(File.read!(Path.join(load, "summary.json"))),
      drill: %{node: refused["name"], reason: reason, refused: refused,
               after: after_drill},
      kill_drill: kill_drill,
      decision_diff: %{
        up: Jason.decode!(File.read!(Path.join(work, "diff_up.json"))),
        down: Jason.decode!(File.read!(Path.join(work, "diff_down.json"))),
        down_refused_without_acceptance: true
      }
    }, pretty: true))
  ' "$ROLLING_UPGRADE_RECORD" "$WORK" "$LOAD_DIR" "${NAMES[@]}"
  ok "record written: $ROLLING_UPGRADE_RECORD"
fi

printf '\nrolling_upgrade %s: every check passed in %ds\n' "$MODE" "$((SECONDS - START))"
