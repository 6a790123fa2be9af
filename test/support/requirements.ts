// What some tests need from the machine (README, "What the tests need"), and
// what happens when it is missing. On a developer's machine the tests that
// need it skip, with a warning naming what is missing and how to get it. Under
// CI=true they fail instead: a green CI run has run the multi-node, browser,
// sandbox and real-CLI tests, not skipped them. VIGIL_TEST_REQUIRE overrides
// the choice: a comma-separated list of requirements (postgresql, chromium,
// bubblewrap, agent-clis, proxies), or "all", or "none".
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export const requirementNames = ['postgresql', 'chromium', 'bubblewrap', 'agent-clis', 'proxies'] as const;
export type Requirement = (typeof requirementNames)[number];

const what: Record<Requirement, string> = {
  postgresql: 'PostgreSQL',
  chromium: 'Chromium',
  bubblewrap: 'bubblewrap (bwrap)',
  'agent-clis': 'the real claude and codex CLIs',
  proxies: 'nginx and Caddy',
};

const how: Record<Requirement, string> = {
  postgresql: 'install it and trust 127.0.0.1 in pg_hba.conf, or set VIGIL_TEST_PG=postgres://…',
  chromium: 'sudo bash scripts/install-chromium.sh',
  bubblewrap: 'sudo bash scripts/install-bubblewrap.sh',
  'agent-clis': 'sudo bash scripts/install-agent-clis.sh, or set REAL_AGENT_BIN',
  proxies: 'sudo bash scripts/install-proxies.sh',
};

/** The requirements a missing one of fails the run instead of skipping, and why. */
function requiredHere(): { names: ReadonlySet<string>; because: string } {
  const given = process.env.VIGIL_TEST_REQUIRE?.trim();
  if (given !== undefined && given !== '') {
    const names = given === 'all' ? [...requirementNames] : given === 'none' ? [] : given.split(',').map((n) => n.trim());
    const unknown = names.filter((n) => !(requirementNames as readonly string[]).includes(n));
    if (unknown.length > 0) throw new Error(`VIGIL_TEST_REQUIRE: unknown requirement ${unknown.join(', ')}; known: ${requirementNames.join(', ')}, or all, or none`);
    return { names: new Set(names), because: `VIGIL_TEST_REQUIRE=${given}` };
  }
  return process.env.CI === 'true' ? { names: new Set(requirementNames), because: 'CI=true' } : { names: new Set(), because: '' };
}

/**
 * `missing` says why `requirement` is not here (undefined: it is). Returns it,
 * so that `describe.skipIf(requirement(...) !== undefined)` skips the tests
 * that need it, after a warning; when the requirement is required here (CI),
 * throws instead, which fails the test file with the same words.
 */
export function requirement(requirement: Requirement, missing: string | undefined, tests: string): string | undefined {
  if (missing === undefined) return undefined;
  const text = `${tests} cannot run without ${what[requirement]}: ${missing} (${how[requirement]})`;
  const required = requiredHere();
  if (required.names.has(requirement)) throw new Error(`${text}. With ${required.because} a missing requirement fails the run rather than skipping these tests.`);
  console.warn(`skipped: ${text}`);
  return missing;
}

/** Debian's Chromium, which the browser tests drive through playwright-core. */
export const chromiumPath = '/usr/bin/chromium';

/** Whether Chromium is here; warns (or, in CI, throws) when it is not. */
export function chromiumFor(tests: string): boolean {
  return requirement('chromium', existsSync(chromiumPath) ? undefined : `${chromiumPath} is missing`, tests) === undefined;
}

function onPath(name: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return dir !== '';
    } catch {
      return false;
    }
  });
}

/** Whether bubblewrap is on PATH; warns (or, in CI, throws) when it is not. */
export function bubblewrapFor(tests: string): boolean {
  return requirement('bubblewrap', onPath('bwrap') ? undefined : 'bwrap is not on PATH', tests) === undefined;
}

/** Where the real agent CLIs are: REAL_AGENT_BIN, else /opt/agent-clis/bin (kept off PATH). */
export const agentCliBin = process.env.REAL_AGENT_BIN ?? '/opt/agent-clis/bin';

/** Whether claude and codex are both in agentCliBin; warns (or, in CI, throws) when not. */
export function agentClisFor(tests: string): boolean {
  const absent = ['claude', 'codex'].filter((name) => !existsSync(join(agentCliBin, name)));
  return requirement('agent-clis', absent.length > 0 ? `${absent.join(' and ')} not in ${agentCliBin}` : undefined, tests) === undefined;
}

/** Whether nginx and caddy are on PATH (the proxy how-to runs both); warns (or, in CI, throws) when not. */
export function proxiesFor(tests: string): boolean {
  const absent = ['nginx', 'caddy'].filter((name) => !onPath(name) && !existsSync(`/usr/sbin/${name}`));
  return requirement('proxies', absent.length > 0 ? `${absent.join(' and ')} not installed` : undefined, tests) === undefined;
}
