#!/usr/bin/env bash
# Installs Debian's Chromium for the browser tests (test/hardening/browser.test.ts).
# Never fails the caller: where it cannot install, it says why and the browser
# test skips with a message.
set -u
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "install-chromium: not root or no apt-get; the browser tests will skip" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
if apt-get update -qq >"$log" 2>&1 && apt-get install -y -qq --no-install-recommends chromium >"$log" 2>&1; then
  echo "install-chromium: installed $(/usr/bin/chromium --version 2>/dev/null || echo chromium)"
else
  tail -n 5 "$log" >&2
  echo "install-chromium: apt-get could not install chromium; the browser tests will skip" >&2
fi
rm -f "$log"
exit 0
