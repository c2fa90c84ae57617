#!/usr/bin/env bash
# Makes sure the toolchains the two README commands need are here, installing
# Elixir and Erlang (with erl_nif headers and Dialyzer) from Debian when they
# are not. Rust comes from rustup and is expected on PATH. `ensure_tools.sh
# demo` asks only for what `make demo` uses: Elixir and cargo.
set -euo pipefail
demo=$([ "${1:-}" = demo ] && echo 1 || true)

missing=()
command -v mix >/dev/null 2>&1 || missing+=(elixir)
if [ -z "$demo" ]; then
  [ -n "$(find /usr/lib/erlang/usr/include -name erl_nif.h 2>/dev/null | head -1)" ] || missing+=(erlang-dev)
  command -v dialyzer >/dev/null 2>&1 || missing+=(erlang-dialyzer)
  # examples/drills/release_check.sh calls the example host's routes with it.
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  # The drills' cleanup and port check (examples/drills/lib/drill.sh).
  command -v ss >/dev/null 2>&1 || missing+=(iproute2)
  command -v pkill >/dev/null 2>&1 || missing+=(procps)
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "==> installing from Debian: ${missing[*]}"
  if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
fi

if ! command -v cargo >/dev/null 2>&1; then
  [ -x "$HOME/.cargo/bin/cargo" ] && echo "cargo is at ~/.cargo/bin: add it to PATH" >&2
  echo "cargo not found: install Rust with rustup (https://rustup.rs)" >&2
  exit 1
fi
[ -z "$demo" ] || exit 0
for component in rustfmt clippy; do
  cargo "${component/rustfmt/fmt}" --version >/dev/null 2>&1 || rustup component add "$component"
done
