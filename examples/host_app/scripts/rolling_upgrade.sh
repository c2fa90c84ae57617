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
#      two untouched (B' not even unpacked there).
# One line per check ("ok  ..." / "FAIL ..."); exit 1 on the first failure.
#
#   scripts/rolling_upgrade.sh [full|short]
#
# `short` (what `make check` runs when ROLLING_UPGRADE=short) loads for a
# second per phase with five clients instead of five seconds with ten.
# DATABASE_URL names the PostgreSQL server (unset: scripts/postgres.sh starts
# one); the database is its name with _rolling_upgrade appended, made afresh.
# ROLLING_UPGRADE_PORTS: the three nodes' HTTP ports (default "4761 4762
# 4763"). ROLLING_UPGRADE_RECORD=PATH writes the run as JSON: `nodes` (each
# install: name, OS pid before/after, fingerprint before/after, install time),
# `responses` (every response: time, node and digest from its headers,
# status), `windows`, `drill`, `decision_diff` (up and down, as
# OpenAgentsPolicy.Decisions renders JSON). ROLLING_UPGRADE_KEEP=1 keeps the work
# directory. Every daemon and load it starts is stopped on exit.
# What it shares with scripts/hot_upgrade.sh (building A and B, the daemons,
# the load, the check lines) is scripts/lib/upgrade.sh.
set -euo pipefail

# shellcheck source=lib/upgrade.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/upgrade.sh"
upgrade_mode "$@"
read -r -a PORTS <<<"${ROLLING_UPGRADE_PORTS:-4761 4762 4763}"
[[ ${#PORTS[@]} -eq 3 ]] || { echo "ROLLING_UPGRADE_PORTS must name three ports" >&2; exit 2; }
WORK="$(mktemp -d "${TMPDIR:-/tmp}/rolling_upgrade.XXXXXX")"
COPY="$WORK/build"
LOAD_DIR="$WORK/load"
LOAD_PID=""
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
digest_of() { on "$1" rpc 'IO.puts(OpenAgentsPolicy.fingerprint().decision_digest)' | tr -d '[:space:]'; }
pid_of() { on "$1" pid | tr -d '[:space:]'; }
coordinate() { # coordinate PHASE VSN FROM TO
  ROLLING_PHASE=$1 "$APP/scripts/rolling_coordinate.sh" "$2" "$3" "$4" \
    "${NAMES[0]}=${DIRS[0]}" "${NAMES[1]}=${DIRS[1]}" "${NAMES[2]}=${DIRS[2]}"
}

step "1. releases A (library 0.1.0) and B (0.1.1, one core decision changed), the relup A -> B"
# One build directory for both, seeded with what the checkout built (see
# seed_copy in lib/upgrade.sh for why).
seed_copy "$COPY" "$WORK/target"
mkdir -p "$LOAD_DIR"
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
  start_daemon on "$i"
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

if [[ -n ${ROLLING_UPGRADE_RECORD:-} ]]; then
  DRILL_OUT="$drill_out" elixir -pa "$JASON_EBIN" -e '
    [record, work, load | names] = System.argv()
    lines = fn file -> file |> File.read!() |> String.split("\n", trim: true) |> Enum.map(&Jason.decode!/1) end
    read = fn name -> work |> Path.join(name) |> File.read!() |> String.trim() end
    after_drill =
      for {name, i} <- Enum.with_index(names) do
        [version, digest, nif] = String.split(read.("drill_after_#{i}"))
        %{name: name, os_pid: String.to_integer(read.("pid_#{i}")),
          fingerprint: %{version: version, decision_digest: digest, nif_sha256: nif}}
      end
    reason = System.get_env("DRILL_OUT") |> String.split("\n") |> Enum.find("", &(&1 =~ "STOPPED at"))
    [refused | _] = lines.(Path.join(work, "drill.jsonl"))
    File.write!(record, Jason.encode!(%{
      nodes: lines.(Path.join(work, "nodes.jsonl")),
      responses: Jason.decode!(File.read!(Path.join(load, "responses.json"))),
      summary: Jason.decode!(File.read!(Path.join(load, "summary.json"))),
      drill: %{node: refused["name"], reason: reason, refused: refused,
               after: after_drill},
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
