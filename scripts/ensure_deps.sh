#!/usr/bin/env bash
# The dependencies a Mix env of the project declares: for `make check`,
# `parity`, `bench`, `bench-host` and `fuzz` the test, docs and bench ones
# (jason, stream_data, ex_doc, benchee; the example host's Phoenix, Ecto,
# ...), for `make demo` the one its env declares (NimbleOptions). From the
# offline mirror when HEX_VENDOR_DIR names one (each is taken by path:
# nothing to fetch), else from Hex with `mix deps.get`, installing Hex first
# when it is missing (as ensure_tools.sh installs Elixir); when hex.pm cannot
# be reached either, it says what to do and fails, instead of Mix asking
# "Shall I install Hex? [Yn]" of a terminal that may not be there.
#
#   scripts/ensure_deps.sh [PROJECT_DIR] [MIX_ENV]   default: the repository root, Mix's default env
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
[ -z "${2:-}" ] || export MIX_ENV="$2"

if [ -n "${HEX_VENDOR_DIR:-}" ]; then
  [ -d "$HEX_VENDOR_DIR" ] || { echo "HEX_VENDOR_DIR=$HEX_VENDOR_DIR is not a directory" >&2; exit 1; }
  exit 0
fi
if ! mix archive 2>/dev/null | grep -q '^\* hex-'; then
  echo "==> installing Hex (mix local.hex --force), which fetches $PWD/mix.exs's dependencies (MIX_ENV=${MIX_ENV:-dev})"
  if ! mix local.hex --force; then
    cat >&2 <<MSG
Hex is not installed, and hex.pm could not be reached to install it.
  Online:   mix local.hex --force, then run make again.
  Offline, from a mirror of unpacked Hex packages (one directory per package):
            HEX_VENDOR_DIR=/path/to/mirror make ...
MSG
    exit 1
  fi
fi
mix deps.get
