#!/usr/bin/env bash
# The test, docs and bench dependencies that `make check`, `parity`, `bench`,
# `bench-host` and `fuzz` need (jason, stream_data, ex_doc, benchee; the
# example host's Phoenix, Ecto, ...): from the offline mirror when
# HEX_VENDOR_DIR names one (each is taken by path: nothing to fetch), else
# from Hex with `mix deps.get`. Without Hex it says what to do and fails,
# instead of Mix asking "Shall I install Hex? [Yn]" of a terminal that may not
# be there. `make demo` calls it for the one its env declares (NimbleOptions).
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
  cat >&2 <<MSG
This needs the test and docs dependencies of $PWD/mix.exs, and Hex is not installed.
  With access to hex.pm:  mix local.hex --force, then run make again.
  Offline, from a mirror of unpacked Hex packages (one directory per package):
                          HEX_VENDOR_DIR=/path/to/mirror make ...
MSG
  exit 1
fi
mix deps.get
