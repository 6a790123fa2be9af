// Publishing a run to a Vigil server: runs the real `vigil serve` on a free
// loopback port and follows the `recipes` monitor the runner creates.
import type { ChildProcess } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEntry, lastRun, makeProject, type Project, runVigil } from './helpers.ts';
import { spawnChild } from '../support/children.ts';

let server: ChildProcess;
let base = '';

beforeAll(async () => {
  server = spawnChild(process.execPath, [cliEntry, 'serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  base = await new Promise<string>((resolve, reject) => {
    let out = '';
    const onData = (c: Buffer) => {
      out += c.toString();
      const m = out.match(/(http:\/\/127\.0\.0\.1:\d+)\/mp\/v0/);
      if (m) resolve(m[1]!);
    };
    server.stdout!.on('data', onData);
    server.stderr!.on('data', onData);
    server.on('exit', () => reject(new Error(`vigil serve exited: ${out}`)));
  });
});
afterAll(() => {
  server.kill('SIGTERM');
});

describe('publishing runs to a Vigil server', () => {
  let project: Project;
  afterAll(() => project?.cleanup());

  it('creates a recipes monitor and publishes the run and every step state change to it', async () => {
    project = makeProject();
    project.yml(`server:\n  base: ${base}\n`);
    project.recipe({ name: 'watched', canary: false, steps: [{ label: 'a', args: ['x'] }, { label: 'b', args: ['y'] }] });
    const r = await runVigil(project, ['sequence', 'watched']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('cannot publish');
    const cacheFile = join(project.root, '.vigil', 'server-monitors.json');
    const cache = JSON.parse(readFileSync(cacheFile, 'utf8')) as Record<string, { id: string; owner_token: string; watch: { subscription: string; token: string } }>;
    const { id, owner_token, watch } = Object.values(cache)[0]!;
    expect(statSync(cacheFile).mode & 0o077).toBe(0); // it holds tokens
    expect(r.stdout).toContain(`publishing to monitor ${id}`);
    expect(r.stdout).toContain(`follow with: vigil watch --base ${base} --subscription ${watch.subscription} --token <watch.token in`);
    const monitor = (await (await fetch(`${base}/mp/v0/monitors/${id}`, { headers: { authorization: `Bearer ${owner_token}` } })).json()) as {
      monitor?: { name: string };
      name?: string;
    };
    expect(monitor.monitor?.name ?? monitor.name).toBe('recipes');

    const page = (await (
      await fetch(`${base}/mp/v0/subscriptions/${watch.subscription}/pull?limit=100`, { headers: { authorization: `Bearer ${watch.token}` } })
    ).json()) as { observations: Array<{ type: string; subject: string | null; data: { status?: string; ended?: string | null } }> };
    const runId = lastRun(project).id;
    const steps = page.observations.filter((o) => o.type === 'ai.vigil.recipe.step');
    expect(steps.map((o) => `${o.subject}:${o.data.status}`)).toEqual([`${runId}/a:running`, `${runId}/a:succeeded`, `${runId}/b:running`, `${runId}/b:succeeded`]);
    expect(steps[1]!.data.ended).toMatch(/^\d{4}-/);
    const runs = page.observations.filter((o) => o.type === 'ai.vigil.recipe.run').map((o) => o.data.status);
    expect(runs).toEqual(['running', 'succeeded']);

    // The way a person follows it: `vigil watch` with the subscription the runner made.
    const watched = await runVigil(project, ['watch', '--base', base, '--subscription', watch.subscription, '--token', watch.token, '--catch-up', '--once']);
    expect(watched.code, watched.stderr).toBe(0);
    expect(watched.stdout).toContain(`ai.vigil.recipe.step ${runId}/b`);
    expect(watched.stdout).toContain('"status":"succeeded"');

    // A second run publishes to the same monitor, and the watcher's subscription stays valid.
    const again = await runVigil(project, ['sequence', 'watched']);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(readFileSync(cacheFile, 'utf8'))).toEqual(cache);
  });
});
