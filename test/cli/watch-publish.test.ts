import { type ChildProcess, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { call, createMonitor, subscribe } from '../support/client.ts';
import { repoRoot, stablePort, startServerProcess, tempDir, vigilArgs } from '../support/server-process.ts';
import { spawnChild } from '../support/children.ts';
import { scaled } from '../support/time-scale.ts';
import { untilTrue } from '../support/until.ts';

function vigil(args: string[]) {
  return spawnSync(process.execPath, vigilArgs(args), { cwd: repoRoot, encoding: 'utf8', timeout: 30_000 });
}

/** The CLI without blocking the test's event loop (spawnSync leaves its idle keep-alive sockets to a server that closed them). */
function vigilAsync(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawnChild(process.execPath, vigilArgs(args), { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    child.once('close', (status) => done({ status, stdout, stderr }));
  });
}

const running: ChildProcess[] = [];
afterEach(() => {
  for (const child of running.splice(0)) child.kill('SIGKILL');
});

function waitForLines(output: () => string, count: number, timeoutMs = 20_000): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const tick = () => {
      const lines = output().split('\n').filter(Boolean);
      if (lines.length >= count) return resolve(lines);
      if (Date.now() - started > scaled(timeoutMs)) return reject(new Error(`only ${lines.length} lines:\n${output()}`));
      setTimeout(tick, 50);
    };
    tick();
  });
}

describe('vigil publish and vigil watch', () => {
  it('publish prints the seq, refuses bad values with the server error and exits 1', async () => {
    const server = await startServerProcess();
    try {
      const { id, ownerToken } = await createMonitor(server.base, { visibility: 'public' });
      const ok = vigil(['publish', id, '--base', server.url, '--token', ownerToken, '--type', 'demo.ok', '--subject', 's', '--data', '{"n":1}']);
      expect(ok.status).toBe(0);
      expect(ok.stdout).toBe(`published ${id} seq 2\n`);
      const bad = vigil(['publish', id, '--base', server.url, '--token', ownerToken, '--type', 'demo.ok', '--tier', 'nope']);
      expect(bad.status).toBe(1);
      expect(bad.stderr).toContain('UNKNOWN_VOCABULARY');
      const json = vigil(['publish', id, '--base', server.url, '--token', 'wrong', '--type', 'demo.ok', '--json']);
      expect(json.status).toBe(1);
      expect(JSON.parse(json.stdout).code).toBe('UNAUTHORIZED');
      const missing = vigil(['publish', id, '--base', server.url, '--token', ownerToken]);
      expect(missing.status).toBe(2);
      expect(missing.stderr).toContain('--type');
      const unknownFlag = vigil(['publish', id, '--bogus', 'x']);
      expect(unknownFlag.status).toBe(2);
      expect(unknownFlag.stderr).toContain('bogus');
    } finally {
      await server.stop();
    }
  }, scaled(120_000));

  it('watch prints one line per observation and keeps going through a server restart without loss or repeats', async () => {
    const state = join(tempDir(), 'watch.db');
    let server = await startServerProcess({ state, port: await stablePort() });
    const { id, ownerToken } = await createMonitor(server.base, { visibility: 'public' });
    const sub = await subscribe(server.base, { monitor: id, subscriber: 'human:watcher', filter: { types: 'demo.*' } });
    const post = (n: number) =>
      call(server.base, 'POST', `/monitors/${id}/observations`, { token: ownerToken, body: { type: 'demo.n', subject: `s${n}`, data: { n } } });
    await post(1);
    await post(2);
    const watch = spawnChild(
      process.execPath,
      vigilArgs(['watch', '--base', server.url, '--subscription', sub.id, '--token', sub.token, '--catch-up', '--wait', '1']),
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    running.push(watch);
    let out = '';
    watch.stdout!.on('data', (d) => (out += d));
    const first = await waitForLines(() => out, 2);
    expect(first[0]).toMatch(/^\d+ demo\.n s1 tier=unverified origin=agent actor=agent:owner monitor=\S+ time=\S+ \{"n":1\}$/);

    await server.kill();
    server = await startServerProcess({ state, port: server.port });
    await post(3);
    await post(4);
    await waitForLines(() => out, 4);
    // One more: once its line is printed, any line printed twice before it would be too.
    await post(5);
    const all = await waitForLines(() => out, 5);
    const subjects = out.split('\n').filter(Boolean).map((line) => line.split(' ')[2]);
    expect(subjects).toEqual(['s1', 's2', 's3', 's4', 's5']);
    expect(all).toHaveLength(5);
    // It acknowledges what it printed, once the page's lines are written (so a moment after the last one).
    let left = -1;
    await untilTrue(
      () => `the watch to acknowledge what it printed (${left} observation(s) left)`,
      async () => {
        left = (await call(server.base, 'GET', `/subscriptions/${sub.id}/pull`, { token: sub.token })).body.observations.length;
        return left === 0;
      },
    );
    await server.stop();
  }, scaled(60_000));

  it('watch prints one compact line per observation, hides bookkeeping unless --all, and prints everything with --json', async () => {
    const server = await startServerProcess();
    try {
      const { id, ownerToken } = await createMonitor(server.base, { visibility: 'public' });
      await call(server.base, 'POST', `/monitors/${id}/observations`, { token: ownerToken, body: { type: 'demo.a', subject: 'x', data: { n: 1 } } });
      await call(server.base, 'POST', `/monitors/${id}/observations`, { token: ownerToken, body: { type: 'demo.b', subject: 'y', data: { n: 2 }, tags: { env: 'ci' } } });
      const sub = await subscribe(server.base, { monitor: id, subscriber: 'agent:w' });
      const args = ['watch', '--base', server.url, '--subscription', sub.id, '--token', sub.token, '--once', '--wait', '0'];
      const compact = await vigilAsync([...args, '--catch-up']);
      expect(compact.status, compact.stderr).toBe(0);
      const lines = compact.stdout.trim().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/^2 demo\.a x tier=unverified origin=agent actor=agent:owner monitor=\S+ time=\S+ \{"n":1\}$/);
      expect(lines[1]).toMatch(/ \{"n":2,"tags":\{"env":"ci"\}\}$/);
      expect(compact.stdout).not.toContain('provenance');
      // Everything was acknowledged, bookkeeping included: a second catch-up has nothing.
      expect((await vigilAsync([...args, '--catch-up'])).stdout).toBe('');

      const again = await subscribe(server.base, { monitor: id, subscriber: 'agent:all' });
      const allArgs = ['watch', '--base', server.url, '--subscription', again.id, '--token', again.token, '--once', '--wait', '0', '--catch-up'];
      const all = await vigilAsync([...allArgs, '--all']);
      expect(all.stdout.trim().split('\n').map((l) => l.split(' ')[1])).toEqual([
        'ai.vigil.monitor.configured',
        'demo.a',
        'demo.b',
        'ai.vigil.monitor.subscribed',
        'ai.vigil.monitor.subscribed',
      ]);
      const third = await subscribe(server.base, { monitor: id, subscriber: 'agent:json' });
      const json = await vigilAsync(['watch', '--base', server.url, '--subscription', third.id, '--token', third.token, '--once', '--wait', '0', '--catch-up', '--json']);
      const parsed = json.stdout.trim().split('\n').map((l) => JSON.parse(l));
      expect(parsed.map((o) => o.type)).toEqual(['demo.a', 'demo.b']);
      expect(parsed[0]).toMatchObject({ id: '2', subject: 'x', data: { n: 1, provenance: { actor: 'agent:owner' } } });
    } finally {
      await server.stop();
    }
  }, 120_000);

  it('watch ended by Ctrl-C exits 130 and by SIGTERM 143, as every command, having printed what it read', async () => {
    const server = await startServerProcess();
    try {
      const { id, ownerToken } = await createMonitor(server.base, { visibility: 'public' });
      for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
        const sub = await subscribe(server.base, { monitor: id, subscriber: `agent:${signal}` });
        const child = spawnChild(process.execPath, vigilArgs(['watch', '--base', server.url, '--subscription', sub.id, '--token', sub.token, '--catch-up']), { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
        running.push(child);
        let out = '';
        child.stdout!.on('data', (d) => (out += d));
        const ended = new Promise<number | null>((done) => child.once('exit', (status) => done(status)));
        await call(server.base, 'POST', `/monitors/${id}/observations`, { token: ownerToken, body: { type: 'demo.live', subject: signal } });
        // Following (from the subscription's start, so whenever it got going): the observation is printed, then the signal ends it.
        await waitForLines(() => out, 1);
        child.kill(signal);
        expect(await ended, signal).toBe(code);
        expect(out).toMatch(new RegExp(` demo\\.live ${signal} `));
      }
    } finally {
      await server.stop();
    }
  }, 120_000);

  it('watch --once prints one batch and exits; without --catch-up it starts at the head', async () => {
    const server = await startServerProcess();
    try {
      const { id, ownerToken } = await createMonitor(server.base, { visibility: 'public' });
      await call(server.base, 'POST', `/monitors/${id}/observations`, { token: ownerToken, body: { type: 'demo.old' } });
      const sub = await subscribe(server.base, { monitor: id, subscriber: 'agent:w' });
      const skipped = vigil(['watch', '--base', server.url, '--subscription', sub.id, '--token', sub.token, '--once', '--wait', '0']);
      expect(skipped.status).toBe(0);
      expect(skipped.stdout).not.toContain('demo.old');
      await call(server.base, 'POST', `/monitors/${id}/observations`, { token: ownerToken, body: { type: 'demo.new' } });
      const once = vigil(['watch', '--base', server.url, '--subscription', sub.id, '--token', sub.token, '--once', '--catch-up', '--wait', '0']);
      expect(once.status).toBe(0);
      expect(once.stdout).toContain('demo.new');
      const missing = vigil(['watch', '--base', server.url, '--token', sub.token]);
      expect(missing.status).toBe(2);
      expect(missing.stderr).toContain('--subscription');
      const badWait = vigil(['watch', '--subscription', sub.id, '--token', sub.token, '--wait', '99']);
      expect(badWait.status).toBe(2);
      expect(badWait.stderr).toContain('--wait');
    } finally {
      await server.stop();
    }
  }, scaled(60_000));
});
