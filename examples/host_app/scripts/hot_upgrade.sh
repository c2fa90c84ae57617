#!/usr/bin/env bash
# Proves that a running host release takes a new library version in place,
# as castle's `bin/APP unpack|install` do it, with the NIF swapped:
#   1. builds release A of examples/host_app on library version 0.1.0, in a
#      copy of the checkout (seeded with what the checkout has built), and
#      copies the release out: that copy is the deployment;
#   2. starts it as a daemon on PostgreSQL, migrated and seeded, and records
#      its OS pid;
#   3. builds release B on library version 0.1.1 in that same copy, in
#      which one decision of the Rust core now changes (the attempt's
#      terminal_commit moves from ledger to glass, so the member's attempts
#      page loses it) and the versions (library and host) are bumped;
#   4. generates the relup A -> B (`mix forecastle.relup`, after `compile`), rebuilds B with
#      it and copies B's tarball into A's releases/;
#   5. runs a load of the five readers' attempts page throughout
#      (scripts/hot_upgrade_load.exs);
#   6. `bin/host_app unpack 0.1.1`; then, B's library cut short, the install
#      of 0.1.1 must be refused up front (the library's check, before the
#      relup's point of no return) with A still running; then, the library
#      restored, the install of 0.1.1. Every install is castle's `install`
#      behind the host's gate (`bin/host_app rpc
#      'HostApp.Upgrade.install("VSN")'`, see HostApp.Upgrade): no request
#      runs while release_handler swaps the applications' environments;
#   7. checks the same OS pid, A's answers before the install and B's after
#      it, zero failed or 5xx requests, and A's .so no longer in
#      /proc/<pid>/maps once the old code is purged; B's decisions narrow
#      (OpenAgentsPolicy.Upgrade.decision_diff/1, printed), so its install
#      needed no one's word;
#   8. the downgrade to 0.1.0 (with B's relup): A's decisions widen from
#      B's, so the library's check refuses the install until the node's
#      OPENAGENTS_POLICY_ACCEPT_WIDENING names A's decision digest; then
#      installed, and A's answers and library checked again.
# One line per check ("ok  ..." / "FAIL ..."); exit 1 on the first failure.
#
#   scripts/hot_upgrade.sh [full|short]
#
# `short` (what `make check` runs) loads for a second per phase with five
# clients instead of five seconds with ten. DATABASE_URL names the
# PostgreSQL server (unset: scripts/postgres.sh starts one); the database is
# its name with _hot_upgrade appended, dropped and made afresh.
# HOT_UPGRADE_PORT is the port the daemon listens on (default 4795);
# HOT_UPGRADE_KEEP=1 keeps the work directory (releases, load log).
# Every daemon and load it starts is stopped on exit, failure included.
# What it shares with scripts/rolling_upgrade.sh (building A and B, the
# daemon, the load, the check lines) is scripts/lib/upgrade.sh.
set -euo pipefail

# shellcheck source=lib/upgrade.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/upgrade.sh"
upgrade_mode "$@"
PORT=${HOT_UPGRADE_PORT:-4795}
WORK="$(mktemp -d "${TMPDIR:-/tmp}/hot_upgrade.XXXXXX")"
DEPLOY="$WORK/deploy"
COPY="$WORK/b"
LOAD_DIR="$WORK/load"
LOAD_PID=""
DAEMON_PID=""
export RELEASE_NODE="hot_upgrade_$$_$RANDOM" RELEASE_COOKIE="hot_upgrade_$$_$RANDOM"
# Fixed, so the sys.config castle writes at each install differs from the
# running one in nothing the host did not change.
export SECRET_KEY_BASE="hot-upgrade-check-key-base-0123456789-0123456789-0123456789-0123"

cleanup() {
  local status=$?
  if [[ -n $LOAD_PID ]]; then kill "$LOAD_PID" 2>/dev/null || true; fi
  # On failure, what the daemon logged (a 500's exception, say) before it
  # goes, and the log, the load's answers and its failures kept whatever
  # HOT_UPGRADE_KEEP says.
  if [[ $status -ne 0 && -d $DEPLOY/tmp/log ]]; then
    local kept ids
    kept=$(mktemp -d "${TMPDIR:-/tmp}/hot_upgrade_failed.XXXXXX")
    cp -a "$DEPLOY/tmp/log" "$kept/daemon_log"
    cp -a "$LOAD_DIR" "$kept/load" 2>/dev/null || true
    cp "$WORK/load.out" "$kept/" 2>/dev/null || true
    echo "---- the daemon's errors and warnings ($kept/daemon_log):"
    cat "$kept"/daemon_log/erlang.log.* 2>/dev/null | grep -A25 -E '\[(error|warning|warn)\]' | tail -120 || true
    ids=$(grep -o 'request_id=[^)]*' "$kept/load/failed" 2>/dev/null | cut -d= -f2 | grep -v '^none$' | sort -u) || true
    for id in $ids; do
      echo "---- the daemon's log of request $id:"
      cat "$kept"/daemon_log/erlang.log.* | grep -A40 -F "request_id=$id" | head -60 || true
    done
    echo "---- kept: $kept (the daemon's log, the load's output and failures)"
  fi
  if [[ -n $DAEMON_PID ]]; then stop_release "$DEPLOY" "$DAEMON_PID"; fi
  if [[ -n ${HOT_UPGRADE_KEEP:-} ]]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

upgrade_env hot_upgrade
export PORT
rel() { (cd "$DEPLOY" && bin/host_app "$@"); }
# The one NIF library of a library version in the deployed release: the
# same name in each version's own directory.
nif_of() {
  local found=("$DEPLOY"/lib/openagents_policy-"$1"/priv/native/$NIF)
  [[ ${#found[@]} -eq 1 && -f ${found[0]} ]] || fail "expected one $NIF for $1, found: ${found[*]}"
  echo "${found[0]}"
}
# A library's path as the release has it (lib/openagents_policy-<vsn>/...):
# the file name alone is the same in every version.
short() { echo "${1#"$DEPLOY"/}"; }
# castle's `bin/host_app install VSN` (Castle.install/1, same output) behind
# HostApp.Upgrade's gate.
gated_install() { rel rpc "HostApp.Upgrade.install(\"$1\")"; }
library_code() { rel rpc 'IO.puts(:code.which(OpenAgentsPolicy.Native))'; }
# decisions VSN: what installing VSN changes in the node's decisions
# (OpenAgentsPolicy.Upgrade.decision_diff/1), printed; sets DECISIONS_DIGEST
# (the target's decision digest), DECISIONS_COUNT and DECISIONS_WIDENS.
decisions() {
  local out
  out=$(rel rpc "{:ok, d} = OpenAgentsPolicy.Upgrade.decision_diff(\"$1\")
    IO.puts(\"#{d.digest} #{length(d.changes)} #{length(d.widened)}\")
    IO.puts(d.markdown)") || fail "decision_diff $1: $out"
  read -r DECISIONS_DIGEST DECISIONS_COUNT DECISIONS_WIDENS <<<"$(head -1 <<<"$out")"
  echo "     what installing $1 changes (OpenAgentsPolicy.Upgrade.decision_diff/1):"
  tail -n +2 <<<"$out" | sed 's/^/       /'
}
library_vsn() { rel rpc 'IO.puts(Application.spec(:openagents_policy, :vsn))' | tr -d '[:space:]'; }
mapped() { grep -c -F "$1" "/proc/$DAEMON_PID/maps" || true; }

step "1. release A (library 0.1.0), built in a copy of $ROOT"
# A and B are built in one directory (see seed_copy in lib/upgrade.sh).
seed_copy "$COPY" "$WORK/target"
build_release "$COPY/examples/host_app"
cp -a "$COPY/examples/host_app/_build/prod/rel/host_app" "$DEPLOY"
NIF_A=$(nif_of 0.1.0)
ok "release A built: host_app 0.1.0 with openagents_policy 0.1.0 ($(short "$NIF_A"))"

step "2. A as a daemon on PostgreSQL, migrated and seeded"
castle_sys_config "$DEPLOY" 0.1.0
fresh_database rel
port_free "$PORT" HOT_UPGRADE_PORT
start_daemon rel
wait_http "$PORT" 100
DAEMON_PID=$(rel pid | tr -d '[:space:]')
[[ $DAEMON_PID =~ ^[0-9]+$ && -r /proc/$DAEMON_PID/maps ]] || fail "no OS pid from bin/host_app pid: $DAEMON_PID"
ok "daemon A up on port $PORT, OS pid $DAEMON_PID, database $(basename "$DB_URL")"

step "3. release B (library 0.1.1, one core decision changed), in the same copy"
edit_b "$COPY"
ok "copy edited: attempt terminal_commit ledger -> glass; library and host at 0.1.1"
build_release "$COPY/examples/host_app"
REL_B="$COPY/examples/host_app/_build/prod/rel/host_app"
nif_b=("$REL_B"/lib/openagents_policy-0.1.1/priv/native/$NIF)
[[ ${#nif_b[@]} -eq 1 && -f ${nif_b[0]} ]] || fail "release B does not carry one $NIF: ${nif_b[*]}"
# The core's edit is in B's library: its bytes differ from A's.
! cmp -s "${nif_b[0]}" "$NIF_A" || fail "release B's library is A's, byte for byte"
ok "release B built: openagents_policy 0.1.1 with ${nif_b[0]#"$REL_B"/}, not A's library"

# The host's appup says its modules need nothing: hold it to that.
host_code() { # the code of every host module (beam_lib:md5, debug info and line tables aside)
  erl -noshell -eval '
    [Dir] = init:get_plain_arguments(),
    [begin {ok, {M, Md5}} = beam_lib:md5(F), io:format("~s ~s~n", [M, binary:encode_hex(Md5)]) end
     || F <- lists:sort(filelib:wildcard(Dir ++ "/*.beam"))],
    halt().' -extra "$1"
}
changed=$(diff <(host_code "$DEPLOY/lib/host_app-0.1.0/ebin") <(host_code "$REL_B/lib/host_app-0.1.1/ebin") |
  awk '/^>/ {print $2}' | paste -sd' ' -) || true
[[ -z $changed ]] ||
  fail "host modules differ between A and B ($changed), yet the host's appup (examples/host_app/appup.exs) loads none"
ok "every host module has the same code in A and B, as the host's empty appup says"

step "4. relup A -> B, B rebuilt with it, B's tarball into A's releases/"
build_relup "$COPY/examples/host_app" "$DEPLOY"
# The library's check before the point of no return, then Native first and
# the three modules whose tables come from the core among the loads right
# after it, in both directions.
erl -noshell -eval '
  [File] = init:get_plain_arguments(),
  {ok, [{"0.1.1", [{"0.1.0", _, Up}], [{"0.1.0", _, Down}]}]} = file:consult(File),
  Ours = fun(Script) ->
    [M || {load, {M, _, _}} <- Script,
          lists:prefix("Elixir.OpenAgents", atom_to_list(M))] end,
  Checks = fun(Script) -> [A || {apply, {'"'"'Elixir.OpenAgentsPolicy.Upgrade'"'"', check, A}} <- Script] end,
  BeforePnr = fun(Script) -> lists:takewhile(fun(I) -> I =/= point_of_no_return end, Script) end,
  Tables = ['"'"'Elixir.OpenAgents.Delegations.Target'"'"', '"'"'Elixir.OpenAgents.Transparency.WorkDisclosure'"'"',
            '"'"'Elixir.OpenAgents.Transparency.Ladder'"'"'],
  First = fun(Script) ->
    [Native | Next] = Ours(Script),
    Native == '"'"'Elixir.OpenAgentsPolicy.Native'"'"' andalso Tables -- lists:sublist(Next, 5) == [] end,
  Ok = First(Up) andalso First(Down)
       andalso Checks(BeforePnr(Up)) == [[up, <<"0.1.1">>]]
       andalso Checks(BeforePnr(Down)) == [[down, <<"0.1.1">>]],
  io:format("~s~n", [Ok]),
  halt().' -extra "$COPY/examples/host_app/relup" | grep -qx true ||
  fail "the relup does not check, then load Native and right after it the table modules, both ways"
ok "relup: Upgrade.check before the point of no return; Native first, Target, WorkDisclosure, Ladder right after it (up and down)"
cp "$COPY/examples/host_app/_build/prod/host_app-0.1.1.tar.gz" "$DEPLOY/releases/"
ok "B's tarball (with releases/0.1.1/relup) copied into A's releases/"

step "5. load: the five readers' attempts page, $CLIENTS clients"
mkdir -p "$LOAD_DIR"
start_load "$WORK/load.out" "$LOAD_DIR" \
  elixir "$APP/scripts/hot_upgrade_load.exs" --port "$PORT" --dir "$LOAD_DIR" --clients "$CLIENTS"
sleep "$PHASE"

# swap PHASE VSN FROM_NIF TO_NIF EXPECTED_OUTPUT: `gated_install VSN`
# between the load's PHASE_start and PHASE_end marks, then the checks: the
# same OS pid, the library version, FROM_NIF no longer mapped (once the old
# code is purged: release_handler soft-purges it at once unless a process is
# still in it), TO_NIF mapped, no old code left for Native.
swap() {
  local phase=$1 vsn=$2 from=$3 to=$4 expected=$5 out pid
  [[ $(mapped "$from") -gt 0 ]] || fail "$(short "$from") is not mapped in $DAEMON_PID before the install"
  ok "before install $vsn: $(short "$from") mapped in /proc/$DAEMON_PID/maps ($(mapped "$from") lines)"
  now_us >"$LOAD_DIR/${phase}_start"
  out=$(gated_install "$vsn")
  now_us >"$LOAD_DIR/${phase}_end"
  [[ $out == "$expected"* ]] || fail "install $vsn: $out"
  ok "install $vsn (castle's, behind the host's gate): $out"
  [[ $(library_vsn) == "$vsn" ]] || fail "the running library is $(library_vsn) after installing $vsn"
  ok "the running VM's openagents_policy is $vsn"
  pid=$(rel pid | tr -d '[:space:]')
  [[ $pid == "$DAEMON_PID" ]] || fail "the OS pid changed: $DAEMON_PID -> $pid"
  ok "same OS pid: $pid"
  [[ $(mapped "$to") -gt 0 ]] || fail "$(short "$to") is not mapped after the install"
  if [[ $(mapped "$from") -ne 0 ]]; then
    echo "     $(short "$from") still mapped after install (a process was in the old code): purging it"
    rel rpc 'for _ <- 1..50, not :code.soft_purge(OpenAgentsPolicy.Native), do: Process.sleep(100)'
  fi
  [[ $(mapped "$from") -eq 0 ]] || fail "$(short "$from") is still mapped after the old code was purged"
  ok "after install $vsn: $(short "$from") no longer mapped (0 lines), $(short "$to") mapped ($(mapped "$to") lines)"
  [[ $(rel rpc 'IO.puts(:erlang.check_old_code(OpenAgentsPolicy.Native))') == false ]] ||
    fail "Native still has old code after the install"
  ok "no old code left for OpenAgentsPolicy.Native"
}

step "6, 7. unpack B; a broken B refused up front; install B; checks"
out=$(rel unpack 0.1.1)
[[ $out == "Unpacked 0.1.1 ok"* ]] || fail "unpack: $out"
ok "bin/host_app unpack 0.1.1: $out"
NIF_B=$(nif_of 0.1.1)
# The library's own check, timed in the running VM (it runs before the
# relup's point of no return on every install).
# (Its first line: on OTP 29 the check's log of B's decision changes follows it.)
took=$(rel rpc '{us, :ok} = :timer.tc(OpenAgentsPolicy.Upgrade, :check, [:up, "0.1.1"]); IO.puts(us)' | sed -n 1p | tr -d '[:space:]')
ok "OpenAgentsPolicy.Upgrade.check(:up, \"0.1.1\") passes in the running VM in $((took / 1000)) ms"
# B's library cut short: the relup must refuse before its point of no return
# and leave A's code and library running, untouched.
cp "$NIF_B" "$WORK/nif_b.so"
head -c 65536 "$WORK/nif_b.so" >"$NIF_B"
out=$(gated_install 0.1.1)
cp "$WORK/nif_b.so" "$NIF_B"
[[ $out == "Install of 0.1.1 failed."*does_not_load* ]] || fail "a truncated library was not refused: $out"
ok "a truncated B library is refused up front: ${out:0:150}..."
native=$(rel rpc 'IO.puts(:code.which(OpenAgentsPolicy.Native))')
[[ $native == */openagents_policy-0.1.0/ebin/* && $(mapped "$NIF_A") -gt 0 && $(mapped "$NIF_B") -eq 0 ]] ||
  fail "the refused install changed the VM: Native from $native, A mapped $(mapped "$NIF_A"), B $(mapped "$NIF_B")"
ok "after the refusal: A's code and library still running, B's library never mapped"
# release_handler replaces the applications' specs (their vsn, env) before it
# evaluates any instruction, and does not put them back when one refuses;
# :release_handler.check_install_release/1 runs the same check without that.
out=$(rel rpc 'IO.inspect(:release_handler.check_install_release(~c"0.1.1"))')
[[ $out == "{:ok, ~c\"0.1.0\", []}" || $out == "{:ok, '0.1.0', []}" ]] ||
  fail "check_install_release 0.1.1 with the library restored: $out"
ok "with B's library restored, :release_handler.check_install_release(~c\"0.1.1\") passes: $out"
# What B decides otherwise, as the library's preflight reads it: a
# narrowing (terminal_commit ledger -> glass), which needs no one's word.
decisions 0.1.1
[[ $DECISIONS_COUNT -gt 0 && $DECISIONS_WIDENS == 0 ]] || fail "B's decisions were not read as a narrowing ($DECISIONS_COUNT changes, $DECISIONS_WIDENS widening)"
ok "B's decisions narrow ($DECISIONS_COUNT changes, none widening): the install needs no acceptance"
swap up 0.1.1 "$NIF_A" "$NIF_B" "Now running 0.1.1 (previously 0.1.0)."
sleep "$PHASE"

step "8. downgrade to A: refused while its decisions widen, then accepted by name; checks"
# Back to A shows terminal_commit to ledger readers again: a widening, which
# the library's check refuses until the node's
# OPENAGENTS_POLICY_ACCEPT_WIDENING names A's decision digest.
decisions 0.1.0
[[ $DECISIONS_WIDENS -gt 0 ]] || fail "A's decisions were not read as widening from B"
out=$(gated_install 0.1.0)
[[ $out == "Install of 0.1.0 failed."*widens*"$DECISIONS_DIGEST"* ]] ||
  fail "a widening downgrade was not refused: $out"
[[ $(library_code) == */openagents_policy-0.1.1/ebin/* && $(mapped "$NIF_B") -gt 0 ]] ||
  fail "the refused downgrade changed the VM: Native from $(library_code)"
ok "install 0.1.0 refused before the point of no return, naming what widens: ${out:0:200}..."
rel rpc "System.put_env(\"OPENAGENTS_POLICY_ACCEPT_WIDENING\", \"$DECISIONS_DIGEST\")" >/dev/null
ok "OPENAGENTS_POLICY_ACCEPT_WIDENING=$DECISIONS_DIGEST set in the node (A's decisions, accepted by name)"
# castle names the version a downgrade went to as the "previous" one.
swap down 0.1.0 "$NIF_B" "$NIF_A" "Now running 0.1.0 "
rel rpc 'System.delete_env("OPENAGENTS_POLICY_ACCEPT_WIDENING")' >/dev/null
sleep "$PHASE"

step "7, 8. the load: A before each install of A, B after the install of B, nothing failed"
judge_load "$WORK/load.out" "$LOAD_DIR"
rel stop >/dev/null
for _ in $(seq 1 50); do kill -0 "$DAEMON_PID" 2>/dev/null || break; sleep 0.1; done
DAEMON_PID=""
printf '\nhot_upgrade %s: every check passed in %ds\n' "$MODE" "$((SECONDS - START))"
