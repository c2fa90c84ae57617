#!/usr/bin/env bash
# The panic check, without the host: the NIF built with the core's test-only
# `panic_probe` feature (which make rust-lint and rust-test lint and test:
# `ladder::read_tier` panics on the probe word), loaded in a VM in place of
# the installed one, compiles the modules that read the core at compile
# time without firing, then raises ErlangError :nif_panicked to whoever asks
# the tier of a record whose `transparency_tier` is the probe word, while
# every other call keeps answering (panic_nif.exs). The panic's message goes
# to the VM's stderr, once per panic, and nowhere else.
#
#   scripts/panic_check.sh   (PANICS=50 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

MIX_ENV=test mix compile >/dev/null
app="$(MIX_ENV=test mix run --no-compile --no-start -e 'IO.puts(Mix.Project.app_path())' | tail -1)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The app's build with its links followed: its priv/ links to the checkout's
# own priv/, where rustler copied the NIF library, so the probe replaces the
# copy's library and never the one the checkout's builds load.
cp -RL "$app/." "$work/openagents_policy"
# (rustler names it libopenagents_policy_nif.so up to 0.36, openagents_policy_nif.so from 0.37)
compgen -G "$work/openagents_policy/priv/native/*openagents_policy_nif*.so" >/dev/null ||
  { echo "no NIF library in $app/priv/native" >&2; exit 1; }
scripts/probe_nif.sh install "$work/openagents_policy" >/dev/null

RUST_BACKTRACE=0 PANICS="${PANICS:-50}" elixir -pa "$work/openagents_policy/ebin" scripts/panic_nif.exs 2>"$work/stderr"
printed="$(grep -c 'PANIC-PROBE-FIRED' "$work/stderr" || true)"
echo "panic probe (library): the panic's message printed to the VM's stderr $printed times"
[ "$printed" = "${PANICS:-50}" ] || { echo "expected ${PANICS:-50}"; tail -5 "$work/stderr"; exit 1; }
echo "panic check passed in $SECONDS s"
