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

const recipes = () =>
  readdirSync(join(repoRoot, 'examples/.vigil/recipes')).map((f) => JSON.parse(readFileSync(join(repoRoot, 'examples/.vigil/recipes', f), 'utf8')) as { name: string; type?: string });

describe('examples/', { timeout: 300_000 }, () => {
  it('lists every recipe without a problem, one of each of the nine types', async () => {
    const r = await vigil(project, ['recipe', 'list']);
    expect(r.stderr).toBe('');
    expect(new Set(recipes().map((x) => x.type ?? 'sequence')).size).toBe(9);
  });

  const runnable = recipes().filter((x) => !['temporal', 'sentinel'].includes(x.type ?? 'sequence'));
  it.each(runnable.map((x) => x.name))('vigil sequence %s', async (name) => {
    const r = await vigil(project, ['sequence', name], { env: { STRATEGY: '1', CANDIDATE_DIR: project.root, ROUND: '1', OBSERVATION_SUBJECT: 'job-1' } });
    expect(r.code, r.stdout + r.stderr).toBe(0);
  });

  it('vigil temporal fire nightly-report', async () => {
    const r = await vigil(project, ['temporal', 'fire', 'nightly-report']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(readFileSync(join(project.root, 'reports/billing.md'), 'utf8')).toBe('report on billing\n');
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
      await vigil(project, ['publish', 'builds', '--token', ownerToken, '--type', 'ci.build.failed', '--subject', 'job-9'], { env });
      const file = join(project.root, 'triage.log');
      await until('the triage', () => existsSync(file) && readFileSync(file, 'utf8').includes('triaged job-9'));
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
