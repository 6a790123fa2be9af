// Issue 31 point 3: `vigil init` and the README's quick start, as a new user
// runs them in an empty folder: every recipe type it writes runs on the local
// agent, without a model.
import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../bench/lib/sentinel-fleet.ts';
import { cliEntry, makeSdkProject, projectEnv, type SdkProject, vigil } from '../sdk/helpers.ts';
import { spawnChild } from '../support/children.ts';
import { createMonitor } from '../support/client.ts';
import { type ServerProcess, startServerProcess } from '../support/server-process.ts';

let project: SdkProject;
beforeAll(() => {
  project = makeSdkProject();
});
afterAll(() => project.cleanup());

describe('vigil init', { timeout: 300_000 }, () => {
  it('writes vigil.yml, the local agent and a recipe of each type, and refuses to overwrite without --force', async () => {
    const made = await vigil(project, ['init']);
    expect(made.code, made.stderr).toBe(0);
    expect(readFileSync(join(project.root, 'vigil.yml'), 'utf8')).toContain('command: .vigil/agents/local-agent.mjs');
    expect(statSync(join(project.root, '.vigil/agents/local-agent.mjs')).mode & 0o111).not.toBe(0);
    const listed = await vigil(project, ['recipe', 'list']);
    expect(listed.stderr).toBe('');
    const types = new Set(listed.stdout.trim().split('\n').slice(1).map((line) => line.split(/\s+/)[1]));
    expect([...types].sort()).toEqual(['adversarial', 'compound', 'convergent', 'parallel', 'pipeline', 'sentinel', 'sequence', 'substrate', 'temporal']);

    writeFileSync(join(project.root, 'vigil.yml'), 'default_backend: mine\n');
    const again = await vigil(project, ['init']);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/vigil\.yml, .* already exist in .*; nothing was written \(--force overwrites\)/);
    expect(readFileSync(join(project.root, 'vigil.yml'), 'utf8')).toBe('default_backend: mine\n');
    const forced = await vigil(project, ['init', '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain('overwrote vigil.yml');
  });

  it.each([
    ['hello', ['sequence', 'hello']],
    ['hello-pipeline', ['sequence', 'hello-pipeline']],
    ['hello-compound', ['sequence', 'hello-compound']],
    ['hello-parallel', ['sequence', 'hello-parallel']],
    ['hello-adversarial', ['sequence', 'hello-adversarial']],
    ['hello-convergent', ['sequence', 'hello-convergent']],
    ['hello-substrate', ['sequence', 'hello-substrate']],
    ['hello-nightly', ['temporal', 'fire', 'hello-nightly']],
  ])('the quick start runs %s', async (_name, args) => {
    const r = await vigil(project, args);
    expect(r.code, r.stdout + r.stderr).toBe(0);
  });

  it('left what the quick start says: greetings from every run, and a finding in CIR', async () => {
    expect(readdirSync(join(project.root, 'greetings')).sort()).toEqual(
      ['ada', 'alice', 'blue', 'bob', 'grace', 'left', 'linus', 'night', 'right', 'world'].map((n) => `${n}.txt`),
    );
    const found = await vigil(project, ['cir', 'query', '--type', 'finding', '--json']);
    expect(JSON.parse(found.stdout).map((s: { body: string }) => s.body)).toContain('the quick start ran');
  });

  it('the sentinel reacts under vigil daemon to a failed build on the monitor builds', async () => {
    let server: ServerProcess | undefined;
    let daemon: ChildProcess | undefined;
    try {
      server = await startServerProcess();
      const { ownerToken } = await createMonitor(server.base, { id: 'builds', capabilities: ['observe', 'act'] });
      const env = { VIGIL_BASE: server.url };
      expect((await vigil(project, ['vault', 'set', 'builds-owner-token'], { stdin: ownerToken, env })).code).toBe(0);
      daemon = spawnChild(process.execPath, [cliEntry, 'daemon'], { cwd: project.root, env: projectEnv(project, env), stdio: ['ignore', 'pipe', 'pipe'] });
      let log = '';
      daemon.stdout!.on('data', (d) => (log += d));
      daemon.stderr!.on('data', (d) => (log += d));
      await until('the sentinel to subscribe', () => log.includes('sentinel hello-sentinel: subscribed to builds'));
      const published = await vigil(project, ['publish', 'builds', '--token', ownerToken, '--type', 'ci.build.failed', '--subject', 'job-42'], { env });
      expect(published.code, published.stderr).toBe(0);
      const file = join(project.root, 'sentinel-reactions.txt');
      await until('the reaction', () => existsSync(file) && readFileSync(file, 'utf8').includes('job-42'));
      expect(readFileSync(file, 'utf8')).toBe('reacted to ci.build.failed on job-42\n');
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
