#!/usr/bin/env bash
# Installs Debian's nginx (light) and Caddy for the proxy how-to
# (docs/how-to/behind-a-proxy.md), which test/docs/how-to.test.ts runs through
# both. Never fails the caller: where it cannot install, it says why and that
# test skips with a message (or fails under CI=true). Stops the system
# services the packages start: the test runs its own, on free ports.
set -u
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ]; }
if have nginx && have caddy; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "install-proxies: not root or no apt-get; the proxy how-to will skip" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
packages="nginx-light caddy"
if apt-get install -y -qq --no-install-recommends $packages >"$log" 2>&1 ||
  { apt-get update -qq >"$log" 2>&1 && apt-get install -y -qq --no-install-recommends $packages >"$log" 2>&1; }; then
  # The packages start system-wide servers on ports 80 and 2019; the test needs none.
  service nginx stop >/dev/null 2>&1 || pkill -x nginx || true
  service caddy stop >/dev/null 2>&1 || pkill -x caddy || true
  echo "install-proxies: installed $(/usr/sbin/nginx -v 2>&1) and caddy $(caddy version 2>/dev/null | cut -d' ' -f1)"
else
  tail -n 5 "$log" >&2
  echo "install-proxies: apt-get could not install nginx and caddy; the proxy how-to will skip" >&2
fi
rm -f "$log"
exit 0
