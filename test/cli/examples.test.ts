// Issue 31 point 3: every example in examples/ runs as shipped. The folder is
// a project (vigil.yml, .vigil/recipes, the files the scripts use); it is
// copied so that runs leave nothing in the repository, with the local agent's
// path made absolute and node_modules linked for the MCP example server.
import type { ChildProcess } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../bench/lib/sentinel-fleet.ts';
import { cliEntry, makeSdkProject, projectEnv, repoRoot, type SdkProject, vigil } from '../sdk/helpers.ts';
import { spawnChild } from '../support/children.ts';
import { createMonitor } from '../support/client.ts';
import { type ServerProcess, startServerProcess } from '../support/server-process.ts';

let project: SdkProject;
beforeAll(() => {
  project = makeSdkProject();
  cpSync(join(repoRoot, 'examples'), project.root, { recursive: true });
  const yml = join(project.root, 'vigil.yml');
  writeFileSync(yml, readFileSync(yml, 'utf8').replace('../src/recipes/starter/local-agent.mjs', join(repoRoot, 'src/recipes/starter/local-agent.mjs')));
  symlinkSync(join(repoRoot, 'node_modules'), join(project.root, 'node_modules'));
  // The sentinel example waits 30 s for newer observations of a subject before it reacts; debounce
  // has tests of its own, so the copy here waits 1 s.
  const sentinel = join(project.root, '.vigil/recipes/sentinel.json');
  writeFileSync(sentinel, JSON.stringify({ ...JSON.parse(readFileSync(sentinel, 'utf8')), debounce: 1 }, null, 2));
});
afterAll(() => project.cleanup());

interface Recipe {
  name: string;
  type?: string;
  blue?: { recipe: string };
  red?: { recipe: string };
  judge?: { recipe: string };
  layers?: Array<{ sequence: string }>;
  recipe?: string;
  scorer?: string;
  sequences?: Array<{ name: string; on?: string }>;
  target?: string;
}
const recipes = () => readdirSync(join(repoRoot, 'examples/.vigil/recipes')).map((f) => JSON.parse(readFileSync(join(repoRoot, 'examples/.vigil/recipes', f), 'utf8')) as Recipe);

/** The recipes a run of `r` starts as children (or its trigger fires), as the recipe names them; a pipeline's `on: failure` one does not run when all goes well. */
function childrenOf(r: Recipe): string[] {
  const names = [r.blue?.recipe, r.red?.recipe, r.judge?.recipe, r.recipe, r.scorer, r.target, ...(r.layers ?? []).map((l) => l.sequence), ...(r.sequences ?? []).filter((s) => s.on !== 'failure').map((s) => s.name)];
  return [...new Set(names.filter((n): n is string => typeof n === 'string'))];
}

const runsDir = () => join(project.root, '.vigil', 'runs');
const runIds = (): Set<string> => new Set(existsSync(runsDir()) ? readdirSync(runsDir()).filter((id) => !id.startsWith('.')) : []);
const runsSince = (before: Set<string>) =>
  [...runIds()].filter((id) => !before.has(id)).map((id) => JSON.parse(readFileSync(join(runsDir(), id, 'run.json'), 'utf8')) as { recipe: string; status: string });
/** Each recipe named ran (as a child of a composite, or fired by a trigger) and succeeded, in a run made since `before`. */
function expectRan(before: Set<string>, names: string[]): void {
  const fresh = runsSince(before);
  for (const name of names) expect(fresh.filter((r) => r.recipe === name).map((r) => r.status), `the runs of ${name}`).toContain('succeeded');
  for (const r of fresh.filter((x) => names.includes(x.recipe))) expect(r.status, `a run of ${r.recipe}`).toBe('succeeded');
}

describe('examples/', { timeout: 300_000 }, () => {
  it('lists every recipe without a problem, one of each of the nine types', async () => {
    const r = await vigil(project, ['recipe', 'list']);
    expect(r.stderr).toBe('');
    expect(new Set(recipes().map((x) => x.type ?? 'sequence')).size).toBe(9);
  });

  // A recipe that another example runs as a child (or that the schedule or the sentinel fires) runs there, with the
  // variables its parent gives it, and each such test checks that it ran and succeeded: its own `vigil sequence`
  // would run the same recipe again (15 of 22 runs, a third of the file's CPU). The others run by name.
  const all = recipes();
  const started = new Set(all.flatMap(childrenOf));
  const runnable = all.filter((x) => !['temporal', 'sentinel'].includes(x.type ?? 'sequence') && !started.has(x.name));
  it.each(runnable.map((x) => [x.name, childrenOf(x)] as const))('vigil sequence %s (and the recipes it runs: %j)', async (name, children) => {
    const before = runIds();
    const r = await vigil(project, ['sequence', name]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expectRan(before, [name, ...children]);
  });

  it('vigil temporal fire nightly-report', async () => {
    const before = runIds();
    const r = await vigil(project, ['temporal', 'fire', 'nightly-report']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(readFileSync(join(project.root, 'reports/billing.md'), 'utf8')).toBe('report on billing\n');
    expectRan(before, childrenOf(all.find((x) => x.name === 'nightly-report')!));
  });

  const scripts = readdirSync(join(repoRoot, 'examples/scripts')).filter((f) => !f.endsWith('.d.ts'));
  it.each(scripts)('vigil script run scripts/%s', async (file) => {
    const args = file === 'plugin-dispatch.ts' ? ['--var', 'TOOL=upper'] : [];
    const r = await vigil(project, ['script', 'run', `scripts/${file}`, ...args]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    if (file === 'plugin-dispatch.ts') expect(r.stdout).toContain('"job"');
    if (file === 'mcp-servers.ts') expect(r.stdout).toContain('echo: hello from a script');
  });

  it('the sentinel example reacts under vigil daemon', async () => {
    let server: ServerProcess | undefined;
    let daemon: ChildProcess | undefined;
    try {
      server = await startServerProcess();
      const { ownerToken } = await createMonitor(server.base, { id: 'builds', capabilities: ['observe', 'act'] });
      const env = { VIGIL_BASE: server.url };
      expect((await vigil(project, ['vault', 'set', 'builds-owner-token'], { stdin: ownerToken, env })).code).toBe(0);
      daemon = spawnChild(process.execPath, [cliEntry, 'daemon', '--no-publish'], { cwd: project.root, env: projectEnv(project, env), stdio: ['ignore', 'pipe', 'pipe'] });
      let log = '';
      daemon.stdout!.on('data', (d) => (log += d));
      daemon.stderr!.on('data', (d) => (log += d));
      await until('the sentinel to subscribe', () => log.includes('subscribed to builds'));
      const before = runIds();
      await vigil(project, ['publish', 'builds', '--token', ownerToken, '--type', 'ci.build.failed', '--subject', 'job-9'], { env });
      const file = join(project.root, 'triage.log');
      await until('the triage', () => existsSync(file) && readFileSync(file, 'utf8').includes('triaged job-9'));
      // The agent wrote the line before it ended: its run is recorded a moment later.
      await until('the triage run to end', () => runsSince(before).some((r) => r.recipe === 'triage' && r.status !== 'running'));
      expectRan(before, childrenOf(all.find((x) => x.name === 'triage-failed-builds')!));
    } finally {
      if (daemon && daemon.exitCode === null) {
        const exited = new Promise((done) => daemon!.once('exit', done));
        daemon.kill('SIGTERM');
        await exited;
      }
      await server?.stop();
    }
  });
});
