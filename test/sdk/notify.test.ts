// notify.send from a script: a line on stderr here (no desktop), and an
// ai.vigil.notify observation on the Vigil server vigil.yml names.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cliEntry, lastJson, makeSdkProject, type SdkProject, vigil } from './helpers.ts';
import { serverCacheFile } from '../../src/recipes/publish/run-monitor.ts';
import { spawnChild } from '../support/children.ts';

vi.setConfig({ testTimeout: 300_000, hookTimeout: 120_000 });

let server: ChildProcess;
let base = '';
let project: SdkProject;

beforeAll(async () => {
  project = makeSdkProject();
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
  project.cleanup();
});

describe('notify', () => {
  it('never throws, writes a stderr line without a desktop, and publishes ai.vigil.notify to the configured server', async () => {
    project.file('vigil.yml', `server:\n  base: ${base}\n`);
    project.script('tell.js', `sdk.notify.send('build', 'finished green'); sdk.notify.send(undefined, 42); return 'sent';`);
    const r = await vigil(project, ['script', 'run', 'tell'], { env: { DISPLAY: '', DBUS_SESSION_BUS_ADDRESS: '', WAYLAND_DISPLAY: '' } });
    expect(r.code, r.stderr).toBe(0);
    expect(lastJson(r)).toBe('sent');
    expect(r.stderr).toContain('[vigil notify] build: finished green');
    const cache = JSON.parse(readFileSync(serverCacheFile(project.root, { VIGIL_HOME: join(project.home, '.vigil') }), 'utf8')) as Record<string, { watch: { subscription: string; token: string } }>;
    const { watch } = Object.values(cache)[0]!;
    const page = (await (await fetch(`${base}/mp/v0/subscriptions/${watch.subscription}/pull?limit=100`, { headers: { authorization: `Bearer ${watch.token}` } })).json()) as {
      observations: Array<{ type: string; subject: string | null; data: { title: string; body: string } }>;
    };
    const notes = page.observations.filter((o) => o.type === 'ai.vigil.notify');
    expect(notes.map((o) => o.data.body)).toEqual(['finished green', '42']);
  });
});
