#!/usr/bin/env bash
# Installs Debian's bubblewrap for the VM-isolation tests (steps with "vm": true).
# Never fails the caller: where it cannot install, it says why and those
# tests skip with a message.
set -u
if command -v bwrap >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "install-bubblewrap: not root or no apt-get; the VM isolation tests will skip" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
if apt-get install -y -qq --no-install-recommends bubblewrap >"$log" 2>&1 ||
  { apt-get update -qq >"$log" 2>&1 && apt-get install -y -qq --no-install-recommends bubblewrap >"$log" 2>&1; }; then
  echo "install-bubblewrap: installed $(bwrap --version 2>/dev/null || echo bubblewrap)"
else
  tail -n 5 "$log" >&2
  echo "install-bubblewrap: apt-get could not install bubblewrap; the VM isolation tests will skip" >&2
fi
rm -f "$log"
exit 0
