// Publishing a run to a Vigil server: runs the real `vigil serve` on a free
// loopback port and follows the `recipes` monitor the runner creates.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEntry, lastRun, makeProject, type Project, runVigil } from './helpers.ts';

let server: ChildProcess;
let base = '';

beforeAll(async () => {
  server = spawn(process.execPath, [cliEntry, 'serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
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
    const cache = JSON.parse(readFileSync(join(project.root, '.vigil', 'server-monitors.json'), 'utf8')) as Record<string, { id: string; owner_token: string }>;
    const { id, owner_token } = Object.values(cache)[0]!;
    expect(r.stdout).toContain(`publishing to monitor ${id}`);
    const headers = { authorization: `Bearer ${owner_token}` };
    const monitor = (await (await fetch(`${base}/mp/v0/monitors/${id}`, { headers })).json()) as { monitor?: { name: string }; name?: string };
    expect(monitor.monitor?.name ?? monitor.name).toBe('recipes');

    const sub = (await (
      await fetch(`${base}/mp/v0/subscriptions`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ monitor: id, subscriber: 'test', from: 'earliest' }),
      })
    ).json()) as { subscription: { id: string }; token: string };
    const page = (await (
      await fetch(`${base}/mp/v0/subscriptions/${sub.subscription.id}/pull?limit=100`, { headers: { authorization: `Bearer ${sub.token}` } })
    ).json()) as { observations: Array<{ type: string; subject: string | null; data: { status?: string } }> };
    const runId = lastRun(project).id;
    const steps = page.observations.filter((o) => o.type === 'ai.vigil.recipe.step').map((o) => `${o.subject}:${o.data.status}`);
    expect(steps).toEqual([`${runId}/a:running`, `${runId}/a:succeeded`, `${runId}/b:running`, `${runId}/b:succeeded`]);
    const runs = page.observations.filter((o) => o.type === 'ai.vigil.recipe.run').map((o) => o.data.status);
    expect(runs).toEqual(['running', 'succeeded']);
  });
});
