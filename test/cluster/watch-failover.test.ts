// What a user does with a cluster: `vigil watch` given every node follows one
// subscription, `vigil publish` goes to another node, and when the node the
// watch reads from is killed the watch carries on against a survivor,
// printing every observation once.
import { type ChildProcess, spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { call, createMonitor, subscribe } from '../support/client.ts';
import { postgresFor } from '../support/postgres.ts';
import { nodesOnOneDatabase } from './nodes.ts';
import { repoRoot, type ServerProcess, vigilArgs } from '../support/server-process.ts';
import { spawnChild } from '../support/children.ts';
import { scaled } from '../support/time-scale.ts';
import { untilTrue } from '../support/until.ts';

const unavailable = await postgresFor('the cluster watch test');

const lines = (text: string) => text.split('\n').filter(Boolean);

describe.skipIf(unavailable !== undefined)('vigil watch against a cluster', () => {
  const cluster = nodesOnOneDatabase();
  let watch: ChildProcess | undefined;

  afterEach(() => {
    watch?.kill('SIGKILL');
  });

  it('moves to a surviving node when the one it reads from is killed', async () => {
    const nodes = await cluster.start(3);
    const [a, b, c] = nodes as [ServerProcess, ServerProcess, ServerProcess];
    const { id, ownerToken } = await createMonitor(a.base, { visibility: 'public' });
    const sub = await subscribe(b.base, { monitor: id, subscriber: 'human:watcher', filter: { types: 'demo.*' } });
    let out = '';
    let err = '';
    watch = spawnChild(process.execPath, vigilArgs(['watch', '--base', [a.url, b.url, c.url].join(','), '--subscription', sub.id, '--token', sub.token, '--wait', '5', '--catch-up']), {
      cwd: repoRoot,
    });
    watch.stdout!.on('data', (d) => (out += d));
    watch.stderr!.on('data', (d) => (err += d));
    const publish = (base: string, n: number) =>
      spawnSync(process.execPath, vigilArgs(['publish', id, '--base', base, '--token', ownerToken, '--type', 'demo.n', '--subject', `s${n}`]), {
        cwd: repoRoot,
        encoding: 'utf8',
      });
    expect(publish(b.url, 1).status).toBe(0);
    await untilTrue(() => `the first line; the watch printed:\n${out}${err}`, () => lines(out).length >= 1, scaled(20_000));
    await a.kill();
    expect(publish(c.url, 2).status).toBe(0);
    expect(publish(b.url, 3).status).toBe(0);
    await untilTrue(() => `three lines; the watch printed:\n${out}${err}`, () => lines(out).length >= 3, scaled(20_000));
    expect(lines(out).map((l) => l.split(' ')[2])).toEqual(['s1', 's2', 's3']);
    expect(err).toContain('switching to');
    // Every printed line was acknowledged on the cluster: nothing is left behind the stored cursor.
    let lag = -1;
    for (let i = 0; i < 100 && lag !== 0; i++) {
      lag = (await call(c.base, 'GET', `/subscriptions/${sub.id}/pull?limit=1`, { token: sub.token })).body.lag;
      if (lag !== 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(lag).toBe(0);
  }, scaled(90_000));
});
