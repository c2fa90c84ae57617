#!/usr/bin/env bash
# arm64_root.sh: makes (once) a Debian trixie arm64 root with Erlang in it,
# for loading the aarch64-unknown-linux-gnu artifact in a real arm64 VM under
# qemu-user (binfmt), and prints its path. Root only (debootstrap, chroot).
#
#   ARM64_ROOT   where the root lives (default /tmp/openagents-arm64/trixie);
#                kept between runs: a later run only checks it is whole
#   ARM64_MIRROR Debian mirror (default http://deb.debian.org/debian)
#
# Installs debootstrap and qemu-user-static on the host when missing, and
# registers qemu-aarch64 with binfmt_misc (mounting it when it is not).
set -euo pipefail
# trixie, not bookworm: bookworm's OTP 25 JIT segfaults under qemu-user (its
# code is written through a second mapping qemu does not see); OTP 27 runs
# with +JMsingle true, one mapping.
ROOT="${ARM64_ROOT:-/tmp/openagents-arm64/trixie}"
log() { printf '[arm64 %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

if [ -x "$ROOT/usr/bin/erl" ] && [ -f "$ROOT/.complete" ]; then
  echo "$ROOT"; exit 0
fi

# One maker at a time: a second run waits for the first and takes its root.
mkdir -p "$(dirname "$ROOT")"
exec 9>"$ROOT.lock"
flock 9
if [ -x "$ROOT/usr/bin/erl" ] && [ -f "$ROOT/.complete" ]; then
  echo "$ROOT"; exit 0
fi

missing=()
command -v debootstrap >/dev/null || missing+=(debootstrap)
[ -x /usr/bin/qemu-aarch64-static ] || missing+=(qemu-user-static)
command -v update-binfmts >/dev/null || missing+=(binfmt-support)
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2 ||
    { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2; }
fi

if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
  mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
fi
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
  update-binfmts --enable qemu-aarch64 >&2 || update-binfmts --import qemu-aarch64 >&2
fi

mirror="${ARM64_MIRROR:-http://deb.debian.org/debian}"

partial="$ROOT.partial"
rm -rf "$partial"
mkdir -p "$(dirname "$ROOT")"
log "debootstrap arm64 trixie into $partial (second stage under qemu-user)"
start=$SECONDS
# erlang-base is the runtime alone (erts, kernel, stdlib): enough to load a NIF.
debootstrap --arch=arm64 --variant=minbase --include=erlang-base trixie "$partial" "$mirror" >&2
touch "$partial/.complete"
rm -rf "$ROOT"
mv "$partial" "$ROOT"
log "arm64 root ready in $((SECONDS - start)) s"
echo "$ROOT"
