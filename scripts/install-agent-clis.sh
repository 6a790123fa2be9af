#!/usr/bin/env bash
# Installs the real claude and codex CLIs, at the versions whose --help texts
# are recorded in test/fixtures/agent-help, into /opt/agent-clis (not on PATH:
# the tests that want "no agent CLI on PATH" must not find them there), for
# test/recipes/real-agent-clis.test.ts. Never fails the caller: where it
# cannot install, it says why and those tests skip with a message.
set -u
prefix=/opt/agent-clis
claude_version=2.1.197
codex_version=0.171.0
if [ -x "$prefix/bin/claude" ] && [ -x "$prefix/bin/codex" ]; then
  exit 0
fi
if ! mkdir -p "$prefix" 2>/dev/null || [ ! -w "$prefix" ]; then
  echo "install-agent-clis: cannot write $prefix; the real-CLI tests will skip" >&2
  exit 0
fi
log=$(mktemp)
if npm install -g --no-fund --no-audit --prefix "$prefix" "@anthropic-ai/claude-code@$claude_version" "@openai/codex@$codex_version" >"$log" 2>&1; then
  echo "install-agent-clis: claude $("$prefix/bin/claude" --version 2>/dev/null | head -n 1), $("$prefix/bin/codex" --version 2>/dev/null | head -n 1) in $prefix/bin"
else
  tail -n 5 "$log" >&2
  echo "install-agent-clis: npm could not install the agent CLIs; the real-CLI tests will skip" >&2
fi
rm -f "$log"
exit 0
