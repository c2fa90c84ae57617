#!/usr/bin/env bash
# The coordinator: installs release VSN on a cluster of host releases one
# node at a time, as the app rolls a relup, and goes on to the next node
# only when the one it just upgraded proves it:
#
#   scripts/rolling_coordinate.sh VSN FROM_DIGEST TO_DIGEST NAME=DIR [NAME=DIR ...]
#
# Each NAME=DIR is a running node (its Erlang node name, its release root).
# A node already permanent on VSN and reporting TO_DIGEST is done and
# skipped, so the same command resumes a rollout that stopped, from the
# first node not done (when every node is, it says so and exits 0).
# First, before any node is touched, the decisions VSN brings: on the first
# node not done (VSN unpacked there if it is not yet),
# OpenAgentsPolicy.Upgrade.decision_diff/1, its Markdown printed (and its
# JSON written to ROLLING_DIFF_LOG=FILE when set). When they widen what
# some reader or caller gets, the rollout is refused (exit 3, one line
# `coordinator: REFUSED VSN: ...` naming each widened answer and the digest
# that accepts it) unless OPENAGENTS_POLICY_ACCEPT_WIDENING names VSN's
# decision digest; then each node gets that variable for its install (the
# library's check takes it there, and the rpc removes it after an install
# that never reached the check). A VSN whose decision document is of a
# format the first node's library does not read is refused the same way
# (exit 3), before any node is touched.
# Then, for each node not done, in order:
#   1. records its fingerprint (OpenAgentsPolicy.fingerprint/0: library
#      version, decision digest, the loaded NIF library's SHA-256), its OS
#      pid still the one it had when the coordinator started;
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
# STOPPED at NAME: REASON`. Exit 0 once every node passed. A node that stops
# answering is such a failure too, wherever it happens: its rpc ends as soon
# as Erlang distribution sees the connection go (at once for a VM killed on a
# live host; net_ticktime, 60 s by default, for one that hangs or a host
# that vanishes), and the line says that the node went down, and during
# what (a node killed during its install: `install of VSN: the node went
# down during it after N ms, before it was made permanent; ...`).
#
# The nodes are reached as bin/host_app reaches them: RELEASE_COOKIE and
# RELEASE_DISTRIBUTION=name in the environment, RELEASE_NODE set per node
# here. Optional: ROLLING_MARKS=DIR gets DIR/<PHASE>_<NAME>_start and _end
# (epoch microseconds) around each install, PHASE being ROLLING_PHASE (default
# up), and DIR/<PHASE>_<NAME>_state once the node is done (its status as
# checked: "OS_PID VERSION DECISION_DIGEST NIF_SHA256 VSN:STATUS...");
# ROLLING_NODES_LOG=FILE gets one JSON object per node done, refused or gone
# down (outcome installed, refused, node_down).
set -euo pipefail

[[ $# -ge 4 ]] || { echo "usage: $0 VSN FROM_DIGEST TO_DIGEST NAME=DIR..." >&2; exit 2; }
VSN=$1 FROM=$2 TO=$3
shift 3
SPECS=("$@")
PHASE=${ROLLING_PHASE:-up}
ERRS=$(mktemp)
trap 'rm -f "$ERRS"' EXIT

rpc() { # rpc NAME DIR EXPR
  (cd "$2" && RELEASE_NODE="$1" bin/host_app rpc "$3")
}
# answers NAME DIR: whether the node answers an rpc at all.
answers() { (cd "$2" && RELEASE_NODE="$1" bin/host_app pid) >/dev/null 2>&1; }
# gone NAME DIR WHAT OUTPUT: stops, saying the node no longer answers
# (WHAT: what the coordinator was doing; OUTPUT: what the failed rpc
# printed, its last line kept); returns when it still answers.
gone() {
  local last
  answers "$1" "$2" && return 0
  last=$(tr -d '\r' <<<"$4" | grep -v '^[[:space:]]*$' | tail -n 1)
  stop "$1" "$3: the node no longer answers (its rpc: ${last:-no output})"
}
# look NAME DIR WHAT: SEEN, the node's status line; a stop naming the node
# and WHAT when it does not answer.
look() {
  SEEN=$(status "$1" "$2" 2>"$ERRS") && [[ -n $SEEN ]] && return 0
  gone "$1" "$2" "$3" "$(cat "$ERRS")"
  stop "$1" "$3: its status could not be read: $(tail -n 1 "$ERRS")"
}
# call NAME DIR WHAT ARGS...: OUT, what `bin/host_app ARGS...` printed; a
# stop naming the node and WHAT when it fails and the node no longer
# answers (when it still does, OUT holds its errors too, for the caller's
# check to show).
call() {
  local name=$1 dir=$2 what=$3 t0
  shift 3
  t0=$(now_us)
  OUT=$(cd "$dir" && RELEASE_NODE="$name" bin/host_app "$@" 2>"$ERRS") && return 0
  OUT="$OUT
$(cat "$ERRS")"
  gone "$name" "$dir" "$what after $((($(now_us) - t0) / 1000)) ms" "$OUT"
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

declare -A PID_OF DONE
for spec in "${SPECS[@]}"; do
  name=${spec%%=*} dir=${spec#*=}
  look "$name" "$dir" "before the rollout"
  PID_OF[$name]=$(field 1 "$SEEN")
  [[ ${PID_OF[$name]} =~ ^[0-9]+$ ]] || stop "$name" "no OS pid (it said ${PID_OF[$name]})"
  if [[ " $SEEN " == *" $VSN:permanent "* && $(field 3 "$SEEN") == "$TO" ]]; then
    DONE[$name]=1
    echo "coordinator: $name is already on $VSN (permanent), pid ${PID_OF[$name]}, digest ${TO:0:12}: done, skipped"
  fi
done

# The decisions VSN brings, read on the first node not done, before any node changes.
first="" first_dir=""
for spec in "${SPECS[@]}"; do
  [[ -n ${DONE[${spec%%=*}]:-} ]] || { first=${spec%%=*} first_dir=${spec#*=}; break; }
done
if [[ -z $first ]]; then
  echo "coordinator: every node on $VSN"
  exit 0
fi
look "$first" "$first_dir" "reading the decisions of $VSN"
if [[ " $SEEN " != *" $VSN:"* ]]; then
  call "$first" "$first_dir" "unpack $VSN" unpack "$VSN"
  [[ $OUT == "Unpacked $VSN ok"* ]] || stop "$first" "unpack $VSN: $OUT"
fi
call "$first" "$first_dir" "reading the decisions of $VSN" rpc "case OpenAgentsPolicy.Upgrade.decision_diff(\"$VSN\") do
    {:ok, d} ->
      IO.puts(\"digest #{d.digest} #{length(d.changes)} #{length(d.widened)}\")
      Enum.each(d.widened, &IO.puts(\"widens \" <> &1.says))
      IO.puts(\"json \" <> d.json)
      IO.puts(d.markdown)
    {:error, why} -> IO.puts(\"error #{inspect(why)}\")
  end"
decisions=$(tr -d '\r' <<<"$OUT")
# A node whose library reads another format of decision document than VSN
# carries cannot say what VSN changes: no rollout one node at a time.
if [[ $decisions == "error {:decision_document, {:unknown_format,"* ]]; then
  echo "coordinator: REFUSED $VSN: $first cannot compare its decisions with $VSN's, whose decision document is of a format its library does not read (${decisions#error }); upgrade every node with a restart instead"
  exit 3
fi
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

for spec in "${SPECS[@]}"; do
  name=${spec%%=*} dir=${spec#*=}
  [[ -z ${DONE[$name]:-} ]] || continue
  look "$name" "$dir" "before its install"
  before=$(fingerprint_of "$SEEN")
  [[ $(field 3 "$SEEN") == "$FROM" ]] ||
    stop "$name" "before its install it reports decision digest $(field 3 "$SEEN"), not $FROM"
  [[ $(field 1 "$SEEN") == "${PID_OF[$name]}" ]] ||
    stop "$name" "its OS pid changed before its install: ${PID_OF[$name]} -> $(field 1 "$SEEN")"
  if [[ " $SEEN " != *" $VSN:"* ]]; then
    call "$name" "$dir" "unpack $VSN" unpack "$VSN"
    [[ $OUT == "Unpacked $VSN ok"* ]] || stop "$name" "unpack $VSN: $OUT"
  fi

  [[ -z ${ROLLING_MARKS:-} ]] || now_us >"$ROLLING_MARKS/${PHASE}_${name}_start"
  t0=$(now_us)
  # The acceptance, set in the node for this install alone: its check
  # (Upgrade.check/3) takes it, and the rpc's `after` removes it in the
  # node when the install never reached the check (refused at the gate),
  # whatever becomes of this coordinator meanwhile.
  install="HostApp.Upgrade.install(\"$VSN\")"
  [[ -z $ACCEPT ]] ||
    install="System.put_env(\"OPENAGENTS_POLICY_ACCEPT_WIDENING\", \"$ACCEPT\"); try do $install after System.delete_env(\"OPENAGENTS_POLICY_ACCEPT_WIDENING\") end"
  installed=0
  out=$(rpc "$name" "$dir" "$install" 2>"$ERRS") || installed=$?
  took=$((($(now_us) - t0) / 1000))
  [[ -z ${ROLLING_MARKS:-} ]] || now_us >"$ROLLING_MARKS/${PHASE}_${name}_end"
  if [[ $installed -ne 0 ]] && ! answers "$name" "$dir"; then
    # Killed, crashed or cut off during its install: release_handler never
    # made VSN permanent there, so a restart boots the release that was.
    json_line "$name" "${PID_OF[$name]}" "" "$before" "" "$took" node_down
    last=$(printf '%s\n%s' "$out" "$(cat "$ERRS")" | tr -d '\r' | grep -v '^[[:space:]]*$' | tail -n 1)
    stop "$name" "install of $VSN: the node went down during it after ${took} ms, before it was made permanent, and no longer answers (its rpc: ${last:-no output}); restart it (bin/host_app daemon: it boots its permanent release), check it, then run this again to resume"
  fi
  if [[ $out != "Now running $VSN"* ]]; then
    out="$out$(cat "$ERRS")"
    SEEN=$(status "$name" "$dir" 2>/dev/null || true)
    json_line "$name" "${PID_OF[$name]}" "$(field 1 "$SEEN")" "$before" "$(fingerprint_of "$SEEN")" "$took" refused
    stop "$name" "install of $VSN refused after ${took} ms: $out"
  fi

  call "$name" "$dir" "commit $VSN" commit "$VSN"
  [[ $OUT == "Committed $VSN."* ]] || stop "$name" "commit $VSN: $OUT"
  look "$name" "$dir" "after its install"
  pid=$(field 1 "$SEEN") after=$(fingerprint_of "$SEEN")
  json_line "$name" "${PID_OF[$name]}" "$pid" "$before" "$after" "$took" installed
  [[ " $SEEN " == *" $VSN:permanent "* ]] || stop "$name" "$VSN is not its permanent release: $SEEN"
  [[ $pid == "${PID_OF[$name]}" ]] || stop "$name" "its OS pid changed: ${PID_OF[$name]} -> $pid"
  [[ $(field 3 "$SEEN") == "$TO" ]] ||
    stop "$name" "after its install it reports decision digest $(field 3 "$SEEN"), not $TO"
  DONE[$name]=1
  [[ -z ${ROLLING_MARKS:-} ]] || echo "$SEEN" >"$ROLLING_MARKS/${PHASE}_${name}_state"

  # Every node: the ones done on TO, the others still on FROM, same pids.
  for other in "${SPECS[@]}"; do
    oname=${other%%=*} odir=${other#*=}
    [[ $oname == "$name" ]] && continue
    want=$FROM
    [[ -z ${DONE[$oname]:-} ]] || want=$TO
    look "$oname" "$odir" "checking the others after $name's install"
    [[ $(field 3 "$SEEN") == "$want" ]] ||
      stop "$name" "after its install, $oname reports $(field 3 "$SEEN"), not $want"
    [[ $(field 1 "$SEEN") == "${PID_OF[$oname]}" ]] || stop "$name" "$oname's OS pid changed"
  done
  echo "coordinator: $name on $VSN (permanent), pid $pid, digest ${TO:0:12}, install ${took} ms; $((${#SPECS[@]} - ${#DONE[@]})) to go"
done
echo "coordinator: every node on $VSN"
