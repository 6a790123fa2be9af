#!/usr/bin/env bash
# Before the tests (.ci/run): starts the local PostgreSQL when it is installed
# but down, then checks what the tests need (README, "What the tests need").
# A missing requirement the run requires fails here, naming it, instead of
# after minutes of tests: under CI=true every one is required, and
# VIGIL_TEST_REQUIRE (postgresql,chromium,bubblewrap,agent-clis,proxies, all or none)
# overrides that, as in test/support/requirements.ts. Otherwise it only warns:
# those tests will skip.
set -u
cd "$(dirname "$0")/.."

pg_answers() {
  node --input-type=module -e "
    import pg from 'pg';
    const client = new pg.Client({ connectionString: process.env.VIGIL_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/postgres', connectionTimeoutMillis: 2000 });
    try { await client.connect(); await client.query('select 1'); await client.end(); } catch { process.exit(1); }
  " 2>/dev/null
}

if ! pg_answers && [ -z "${VIGIL_TEST_PG:-}" ] && [ -d /etc/postgresql ] && command -v pg_ctlcluster >/dev/null 2>&1; then
  version=$(ls /etc/postgresql | head -n 1)
  echo "test-requirements: PostgreSQL $version is installed but does not answer; starting it"
  pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  for _ in $(seq 1 50); do pg_answers && break; sleep 0.2; done
fi

declare -A missing=()
pg_answers || missing[postgresql]="PostgreSQL: nothing answers at ${VIGIL_TEST_PG:-postgres://postgres@127.0.0.1:5432} (install it and trust 127.0.0.1 in pg_hba.conf, or set VIGIL_TEST_PG)"
[ -x /usr/bin/chromium ] || missing[chromium]="Chromium: /usr/bin/chromium is missing (sudo bash scripts/install-chromium.sh)"
command -v bwrap >/dev/null 2>&1 || missing[bubblewrap]="bubblewrap: bwrap is not on PATH (sudo bash scripts/install-bubblewrap.sh)"
bin=${REAL_AGENT_BIN:-/opt/agent-clis/bin}
[ -x "$bin/claude" ] && [ -x "$bin/codex" ] || missing[agent-clis]="the real agent CLIs: claude and codex are not both in $bin (sudo bash scripts/install-agent-clis.sh, or set REAL_AGENT_BIN)"
{ command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; } && command -v caddy >/dev/null 2>&1 || missing[proxies]="nginx and Caddy: not both installed (sudo bash scripts/install-proxies.sh)"

all="postgresql chromium bubblewrap agent-clis proxies"
required=${VIGIL_TEST_REQUIRE:-}
if [ -z "$required" ]; then
  if [ "${CI:-}" = true ]; then required=all; else required=none; fi
  because="CI=${CI:-}"
else
  because="VIGIL_TEST_REQUIRE=$required"
fi
[ "$required" = all ] && required=$all
[ "$required" = none ] && required=
required=${required//,/ }

failed=0
for name in $all; do
  [ -n "${missing[$name]:-}" ] || continue
  if [[ " $required " == *" $name "* ]]; then
    echo "test-requirements: missing, and required ($because): ${missing[$name]}" >&2
    failed=1
  else
    echo "test-requirements: missing; the tests that need it will skip: ${missing[$name]}" >&2
  fi
done
exit $failed
