#!/usr/bin/env bash
# Proves the library drops into a host app and ships in a release:
#   (a) from a clean state, compile examples/host_app and run its test suite;
#   (b) build its prod release, check that it carries the NIF, and check the
#       answer of `bin/host_app eval` (run from a copy outside the repository);
#   (c) rebuild the release from a clean _build with OPENAGENTS_POLICY_NIF_PATH
#       pointing at a prebuilt library and a `cargo` on PATH that fails, prove
#       cargo was never run, and check the eval answer again.
# Run from anywhere: paths are relative to the repository root, found from
# this script's own location.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
APP="$ROOT/examples/host_app"
NIF=libopenagents_policy_nif.so
WORK="$(mktemp -d "${TMPDIR:-/tmp}/release_check.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

# The prebuilt path is tested in (c) only; (a) and (b) build with cargo.
unset OPENAGENTS_POLICY_NIF_PATH

START=$SECONDS
section_start=$SECONDS

section() {
  printf '\n==== %s ====\n' "$*"
  section_start=$SECONDS
}

done_section() {
  printf -- '---- ok (%ds)\n' "$((SECONDS - section_start))"
}

fail() {
  printf '\nFAIL: %s\n' "$*" >&2
  exit 1
}

# The expression every release is asked, and the lines it must print.
EVAL_EXPR=$(
  cat <<'EOF'
alias OpenAgents.Delegations.Target
alias OpenAgents.Transparency.{ArtifactLink, WorkDisclosure}
{:ok, _} = Application.ensure_all_started(:host_app)
so = OpenAgentsPolicy.Native.library_file()
IO.puts("nif=" <> Path.relative_to(Path.dirname(so), to_string(:code.root_dir())) <> " files=#{length(File.ls!(Path.dirname(so)))} loaded=#{File.regular?(so)}")
IO.puts("box_seam=" <> inspect(Target.seam("box", Target.box_lifecycle("idle"), true)))
machine = %OpenAgents.Machines.Machine{id: "m1", status: "active"}
IO.puts("computer_seam=" <> inspect(Target.seam("computer", Target.computer_lifecycle(machine, false), true)))
IO.puts("delegation=" <> inspect(Target.delegation_seam(Target.job_lifecycle("stopping"))))
viewer = WorkDisclosure.viewer(%{id: "r1"}, nil)
tier = WorkDisclosure.effective_tier(%{transparency_tier: "ledger"}, viewer)
attempt = %{id: "a1", state: "completed", target_kind: "box", requester_kind: "user", branch: "fix/x", machine_id: "m1"}
IO.puts("projection=#{tier} " <> inspect(WorkDisclosure.project(:attempt, attempt, tier)))
{:ok, link} = WorkDisclosure.link_for_attempt(%{id: "r1"}, %{"type" => "user", "id" => "u1"}, %{})
IO.puts("link=#{link.tier} #{link.artifact_type} #{link.account_id} stored=#{OpenAgents.Repo.get(ArtifactLink, link.id) == link}")
EOF
)

EXPECTED=(
  'nif=lib/openagents_policy-0.1.0/priv/native files=1 loaded=true'
  'box_seam=%{"capabilities" => ["start"], "custody" => "openagents_managed", "lifecycle" => "active", "runtime_class" => nil, "unavailable_reason" => nil}'
  'computer_seam=%{"capabilities" => [], "custody" => "customer_premises", "lifecycle" => "cold", "runtime_class" => "connected", "unavailable_reason" => "cold"}'
  'delegation=%{"capabilities" => [], "lifecycle" => "failed"}'
  'projection=pulse %{admitted_at: nil, finished_at: nil, id: "a1", requester_kind: "user", started_at: nil, state: "completed", target_kind: "box"}'
  'link=ledger attempt u1 stored=true'
)

# installed DIR: the one NIF library in DIR (fails unless there is exactly one).
installed() {
  local files=("$1"/libopenagents_policy_nif*.so)
  [[ ${#files[@]} -eq 1 && -f "${files[0]}" ]] || fail "expected one NIF library in $1, found: ${files[*]}"
  printf '%s\n' "${files[0]}"
}

# check_release LABEL: the release carries the NIF, and a copy of it outside
# the repository answers EVAL_EXPR with exactly the EXPECTED lines.
check_release() {
  local label=$1 rel="$APP/_build/prod/rel/host_app"
  # Each build is installed under its own name; the release carries the one.
  local shipped
  shipped=$(installed "$rel/lib/openagents_policy-0.1.0/priv/native")
  cmp -s "$shipped" "$(installed "$APP/_build/prod/lib/openagents_policy/priv/native")" ||
    fail "$label: the release's NIF differs from the one the build installed"

  local copy="$WORK/rel-$label"
  rm -rf "$copy"
  cp -a "$rel" "$copy"
  local out
  out=$("$copy/bin/host_app" eval "$EVAL_EXPR" 2>&1) ||
    fail "$label: bin/host_app eval exited non-zero:"$'\n'"$out"
  printf '%s\n' "$out" | sed 's/^/  | /'
  for line in "${EXPECTED[@]}"; do
    grep -qxF -- "$line" <<<"$out" ||
      fail "$label: eval output lacks the line:"$'\n'"  $line"
  done
  [[ $(wc -l <<<"$out") -eq ${#EXPECTED[@]} ]] ||
    fail "$label: eval printed $(wc -l <<<"$out") lines, expected ${#EXPECTED[@]}"
  echo "  eval answer checked (${#EXPECTED[@]} lines)"
}

section "setup: clean examples/host_app ($APP)"
echo "elixir: $(elixir --version | tail -1)"
echo "cargo:  $(cargo --version)"
rm -rf "$APP/_build" "$APP/deps"
done_section

section "(a) compile host_app and run its test suite (MIX_ENV=test)"
cd "$APP"
MIX_ENV=test mix compile --warnings-as-errors
MIX_ENV=test mix test
done_section

section "(b) prod release built with cargo, eval checked"
MIX_ENV=prod mix release --overwrite --quiet
check_release cargo
done_section

section "(c) prod release from a clean _build with OPENAGENTS_POLICY_NIF_PATH and a failing cargo"
(cd "$ROOT" && cargo build --release -p openagents_policy_nif)
target_dir="${CARGO_TARGET_DIR:-$ROOT/target}"
mkdir -p "$WORK/prebuilt" "$WORK/fakebin"
cp "$target_dir/release/$NIF" "$WORK/prebuilt/$NIF"
echo "prebuilt: $(sha256sum "$WORK/prebuilt/$NIF" | cut -c1-16)… $WORK/prebuilt/$NIF"

marker="$WORK/cargo-was-run"
cat >"$WORK/fakebin/cargo" <<EOF
#!/bin/sh
echo "fake cargo: \$*" >>"$marker"
echo "cargo must not run when OPENAGENTS_POLICY_NIF_PATH is set" >&2
exit 101
EOF
chmod +x "$WORK/fakebin/cargo"
PATH="$WORK/fakebin:$PATH" cargo --version >/dev/null 2>&1 && fail "the fake cargo did not fail"
rm -f "$marker"

rm -rf "$APP/_build" "$APP/deps"
build_log="$WORK/prebuilt-build.log"
if ! OPENAGENTS_POLICY_NIF_PATH="$WORK/prebuilt/$NIF" PATH="$WORK/fakebin:$PATH" \
  MIX_ENV=prod mix release --overwrite --quiet >"$build_log" 2>&1; then
  cat "$build_log"
  fail "the release did not build with OPENAGENTS_POLICY_NIF_PATH set"
fi
sed 's/^/  > /' "$build_log"
[[ ! -e "$marker" ]] || fail "cargo was run: $(cat "$marker")"
grep -qF "Installing prebuilt NIF $WORK/prebuilt/$NIF" "$build_log" ||
  fail "the build log does not show the prebuilt NIF being installed"
cmp -s "$WORK/prebuilt/$NIF" "$(installed "$APP/_build/prod/rel/host_app/lib/openagents_policy-0.1.0/priv/native")" ||
  fail "the release does not carry the prebuilt NIF byte for byte"
echo "  cargo was not run; the release carries the prebuilt library byte for byte"
check_release prebuilt
done_section

printf '\n==== release_check: all passed in %ds ====\n' "$((SECONDS - START))"
