#!/usr/bin/env bash
# The coordinator: installs release VSN on a cluster of host releases one
# node at a time, as the app rolls a relup, and goes on to the next node
# only when the one it just upgraded proves it:
#
#   scripts/rolling_coordinate.sh VSN FROM_DIGEST TO_DIGEST NAME=DIR [NAME=DIR ...]
#
# Each NAME=DIR is a running node (its Erlang node name, its release root).
# First, before any node is touched, the decisions VSN brings: on the first
# node (VSN unpacked there if it is not yet),
# OpenAgentsPolicy.Upgrade.decision_diff/1, its Markdown printed (and its
# JSON written to ROLLING_DIFF_LOG=FILE when set). When they widen what
# some reader or caller gets, the rollout is refused (exit 3, one line
# `coordinator: REFUSED VSN: ...` naming each widened answer and the digest
# that accepts it) unless OPENAGENTS_POLICY_ACCEPT_WIDENING names VSN's
# decision digest; then each node gets that variable for its install (the
# library's check reads it there) and loses it after.
# Then, for each node, in order:
#   1. records its OS pid and fingerprint (OpenAgentsPolicy.fingerprint/0:
#      library version, decision digest, the loaded NIF library's SHA-256);
#   2. `bin/host_app unpack VSN` when VSN is not unpacked there yet (an
#      upgrade; a downgrade's VSN is the old release, already there);
#   3. `HostApp.Upgrade.install(VSN)` (castle's install behind the host's
#      gate) through `bin/host_app rpc`, timed; a refusal stops the rollout
#      here (the library's check refuses before the relup's
#      point_of_no_return, so the node is still on its release);
#   4. `Castle.commit(VSN)`: the release made permanent;
#   5. checks: VSN is the node's permanent release; the same OS pid; its
#      decision digest is TO_DIGEST; every node already done reports
#      TO_DIGEST and every node not yet done FROM_DIGEST (their pids
#      unchanged).
# Any failed check stops the rollout: exit 1 with one line, `coordinator:
# STOPPED at NAME: REASON`. Exit 0 once every node passed.
#
# The nodes are reached as bin/host_app reaches them: RELEASE_COOKIE and
# RELEASE_DISTRIBUTION=name in the environment, RELEASE_NODE set per node
# here. Optional: ROLLING_MARKS=DIR gets DIR/<PHASE>_<NAME>_start and _end
# (epoch microseconds) around each install, PHASE being ROLLING_PHASE (default
# up); ROLLING_NODES_LOG=FILE gets one JSON object per node done (or refused).
set -euo pipefail

[[ $# -ge 4 ]] || { echo "usage: $0 VSN FROM_DIGEST TO_DIGEST NAME=DIR..." >&2; exit 2; }
VSN=$1 FROM=$2 TO=$3
shift 3
SPECS=("$@")
PHASE=${ROLLING_PHASE:-up}

rpc() { # rpc NAME DIR EXPR
  (cd "$2" && RELEASE_NODE="$1" bin/host_app rpc "$3")
}
# One call per look at a node (each rpc boots a VM): "OS_PID VERSION
# DECISION_DIGEST NIF_SHA256 VSN:STATUS...", the fingerprint being
# OpenAgentsPolicy.fingerprint/0's.
status() {
  rpc "$1" "$2" 'f = OpenAgentsPolicy.fingerprint()
    rels = Enum.map_join(:release_handler.which_releases(), " ", fn {_, v, _, s} -> "#{v}:#{s}" end)
    IO.puts("#{System.pid()} #{f.version} #{f.decision_digest} #{f.nif.sha256} #{rels}")' | tr -d '\r'
}
field() { cut -d' ' -f"$1" <<<"$2"; }
fingerprint_of() { cut -d' ' -f2-4 <<<"$1"; }
now_us() { date +%s%6N; }
stop() {
  echo "coordinator: STOPPED at $1: $2"
  exit 1
}
json_line() { # NAME PID_BEFORE PID_AFTER FP_BEFORE FP_AFTER INSTALL_MS OUTCOME
  [[ -n ${ROLLING_NODES_LOG:-} ]] || return 0
  local b=($4) a=($5)
  printf '{"name":"%s","phase":"%s","vsn":"%s","os_pid_before":%s,"os_pid_after":%s,' \
    "$1" "$PHASE" "$VSN" "$2" "${3:-null}" >>"$ROLLING_NODES_LOG"
  printf '"fingerprint_before":{"version":"%s","decision_digest":"%s","nif_sha256":"%s"},' \
    "${b[0]}" "${b[1]}" "${b[2]}" >>"$ROLLING_NODES_LOG"
  printf '"fingerprint_after":{"version":"%s","decision_digest":"%s","nif_sha256":"%s"},' \
    "${a[0]:-}" "${a[1]:-}" "${a[2]:-}" >>"$ROLLING_NODES_LOG"
  printf '"install_ms":%s,"outcome":"%s"}\n' "$6" "$7" >>"$ROLLING_NODES_LOG"
}

declare -A PID_OF
for spec in "${SPECS[@]}"; do
  name=${spec%%=*} dir=${spec#*=}
  PID_OF[$name]=$(field 1 "$(status "$name" "$dir")")
  [[ ${PID_OF[$name]} =~ ^[0-9]+$ ]] || stop "$name" "no OS pid (it said ${PID_OF[$name]})"
done

# The decisions VSN brings, read on the first node before any node changes.
first=${SPECS[0]%%=*} first_dir=${SPECS[0]#*=}
if [[ " $(status "$first" "$first_dir") " != *" $VSN:"* ]]; then
  out=$(cd "$first_dir" && RELEASE_NODE="$first" bin/host_app unpack "$VSN")
  [[ $out == "Unpacked $VSN ok"* ]] || stop "$first" "unpack $VSN: $out"
fi
decisions=$(rpc "$first" "$first_dir" "case OpenAgentsPolicy.Upgrade.decision_diff(\"$VSN\") do
    {:ok, d} ->
      IO.puts(\"digest #{d.digest} #{length(d.changes)} #{length(d.widened)}\")
      Enum.each(d.widened, &IO.puts(\"widens \" <> &1.says))
      IO.puts(\"json \" <> d.json)
      IO.puts(d.markdown)
    {:error, why} -> IO.puts(\"error #{inspect(why)}\")
  end" | tr -d '\r')
read -r _ DIGEST CHANGES WIDENS <<<"$(grep -m1 '^digest ' <<<"$decisions" || true)"
[[ -n ${DIGEST:-} ]] || stop "$first" "the decisions of $VSN could not be read: $decisions"
[[ -z ${ROLLING_DIFF_LOG:-} ]] || sed -n 's/^json //p' <<<"$decisions" >"$ROLLING_DIFF_LOG"
echo "coordinator: what $VSN changes in the decisions ($CHANGES answers, $WIDENS widening):"
sed -n '/^json /,$p' <<<"$decisions" | tail -n +2 | sed 's/^/  /'
ACCEPT=""
if [[ $WIDENS -gt 0 ]]; then
  if [[ ${OPENAGENTS_POLICY_ACCEPT_WIDENING:-} != "$DIGEST" ]]; then
    sed -n 's/^widens /  widens: /p' <<<"$decisions"
    echo "coordinator: REFUSED $VSN: its decisions widen $WIDENS answers (above), and no one accepted them; to roll it out, OPENAGENTS_POLICY_ACCEPT_WIDENING=$DIGEST"
    exit 3
  fi
  ACCEPT=$DIGEST
  echo "coordinator: $VSN's widening accepted by name (OPENAGENTS_POLICY_ACCEPT_WIDENING=$DIGEST)"
fi

done_count=0
for spec in "${SPECS[@]}"; do
  name=${spec%%=*} dir=${spec#*=}
  seen=$(status "$name" "$dir")
  before=$(fingerprint_of "$seen")
  [[ $(field 3 "$seen") == "$FROM" ]] ||
    stop "$name" "before its install it reports decision digest $(field 3 "$seen"), not $FROM"
  if [[ " $seen " != *" $VSN:"* ]]; then
    out=$(cd "$dir" && RELEASE_NODE="$name" bin/host_app unpack "$VSN")
    [[ $out == "Unpacked $VSN ok"* ]] || stop "$name" "unpack $VSN: $out"
  fi

  [[ -z ${ROLLING_MARKS:-} ]] || now_us >"$ROLLING_MARKS/${PHASE}_${name}_start"
  t0=$(now_us)
  accept=""
  [[ -z $ACCEPT ]] || accept="System.put_env(\"OPENAGENTS_POLICY_ACCEPT_WIDENING\", \"$ACCEPT\"); "
  out=$(rpc "$name" "$dir" "${accept}HostApp.Upgrade.install(\"$VSN\")")
  [[ -z $ACCEPT ]] || rpc "$name" "$dir" 'System.delete_env("OPENAGENTS_POLICY_ACCEPT_WIDENING")' >/dev/null
  took=$((($(now_us) - t0) / 1000))
  [[ -z ${ROLLING_MARKS:-} ]] || now_us >"$ROLLING_MARKS/${PHASE}_${name}_end"
  if [[ $out != "Now running $VSN"* ]]; then
    seen=$(status "$name" "$dir" || true)
    json_line "$name" "${PID_OF[$name]}" "$(field 1 "$seen")" "$before" "$(fingerprint_of "$seen")" "$took" refused
    stop "$name" "install of $VSN refused after ${took} ms: $out"
  fi

  out=$(rpc "$name" "$dir" "Castle.commit(\"$VSN\")")
  [[ $out == "Committed $VSN."* ]] || stop "$name" "commit $VSN: $out"
  seen=$(status "$name" "$dir")
  pid=$(field 1 "$seen") after=$(fingerprint_of "$seen")
  json_line "$name" "${PID_OF[$name]}" "$pid" "$before" "$after" "$took" installed
  [[ " $seen " == *" $VSN:permanent "* ]] || stop "$name" "$VSN is not its permanent release: $seen"
  [[ $pid == "${PID_OF[$name]}" ]] || stop "$name" "its OS pid changed: ${PID_OF[$name]} -> $pid"
  [[ $(field 3 "$seen") == "$TO" ]] ||
    stop "$name" "after its install it reports decision digest $(field 3 "$seen"), not $TO"
  done_count=$((done_count + 1))

  # Every node: the ones done on TO, the others still on FROM, same pids.
  i=0
  for other in "${SPECS[@]}"; do
    i=$((i + 1))
    oname=${other%%=*} odir=${other#*=}
    [[ $oname == "$name" ]] && continue
    want=$FROM
    [[ $i -le $done_count ]] && want=$TO
    seen=$(status "$oname" "$odir")
    [[ $(field 3 "$seen") == "$want" ]] ||
      stop "$name" "after its install, $oname reports $(field 3 "$seen"), not $want"
    [[ $(field 1 "$seen") == "${PID_OF[$oname]}" ]] || stop "$name" "$oname's OS pid changed"
  done
  echo "coordinator: $name on $VSN (permanent), pid $pid, digest ${TO:0:12}, install ${took} ms; $((${#SPECS[@]} - done_count)) to go"
done
echo "coordinator: every node on $VSN"
