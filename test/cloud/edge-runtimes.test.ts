// Issue 42 point 7: the workerd runtimes the managed edge keeps running are
// bounded. 20 trivial workers of one key held 20 workerd processes and 908 MB
// for good; now a key and the server run only so many at once (the least
// recently used idle one makes room), idle ones are stopped, all of them stay
// within a memory budget, and a start that only busy runtimes stand in the
// way of is refused with 503. Counted from /proc, as the machine sees it.
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { workerdChildren } from '../../src/cloud/edge/workerd-guard.ts';
import { call } from '../support/client.ts';
import { edgeFetch } from '../support/edge.ts';
import { untilTrue } from '../support/until.ts';
import { useServer } from '../http/fixtures.ts';
import { adminToken, makeKey } from './fixtures.ts';

const script = `export default { async fetch(request) {
  if (new URL(request.url).pathname === '/hold') {
    return new Response(new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode('held\\n')); }, pull() { return new Promise((r) => setTimeout(r, 600000)); } }));
  }
  return new Response('hello from ' + new URL(request.url).hostname.split('.')[0]);
} };`;

const residentMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

/** A request whose answer began and is held open; the caller closes it. */
function hold(port: number, name: string): Promise<{ status: number; close: () => void }> {
  return new Promise((done, fail) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/hold', headers: { host: `${name}.localhost:${port}` } }, (res) => {
      res.on('error', () => {});
      res.once('data', () => done({ status: res.statusCode ?? 0, close: () => req.destroy() }));
    });
    req.on('error', (error) => ((req as { res?: unknown }).res ? undefined : fail(error)));
    req.end();
  });
}

describe('managed-edge runtimes are bounded per key, per server and when idle', { timeout: 300_000 }, () => {
  const server = useServer({ args: ['--allow-admin', adminToken, '--worker-timeout', '120', '--edge-limits', 'running_per_key=2,running_per_server=3,idle_seconds=3'] });

  it('runs at most 2 of a key and 3 in all, serves every worker, refuses a start only busy ones block, and stops idle ones', async () => {
    const pid = server.server.child.pid!;
    const running = () => workerdChildren(pid).length;
    const [alice, bob] = [await makeKey(server.url, 'alice'), await makeKey(server.url, 'bob')];
    let port = 0;
    let most = 0;
    const names = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6'];
    for (const name of names) {
      const deployed = await call(server.url, 'PUT', `/v1/workers/${name}`, { token: alice, body: { script } });
      expect(deployed.status, JSON.stringify(deployed.body)).toBe(200);
      port = Number(new URL(deployed.body.url).port);
      most = Math.max(most, running());
    }
    // Every worker still answers: a stopped runtime starts again on its next use, another idle one making room.
    for (const name of [...names, ...names]) {
      const answer = await edgeFetch(`http://${name}.localhost:${port}/`);
      expect([answer.status, answer.text]).toEqual([200, `hello from ${name}`]);
      most = Math.max(most, running());
    }
    expect(most).toBeLessThanOrEqual(2);

    for (const name of ['b1', 'b2']) {
      expect((await call(server.url, 'PUT', `/v1/workers/${name}`, { token: bob, body: { script } })).status).toBe(200);
      expect((await edgeFetch(`http://${name}.localhost:${port}/`)).text).toBe(`hello from ${name}`);
      most = Math.max(most, running());
    }
    expect(most).toBeLessThanOrEqual(3);

    // Two of alice's runtimes busy: a third of hers cannot start until one is free.
    const held = [await hold(port, 'a1'), await hold(port, 'a2')];
    expect(held.map((h) => h.status)).toEqual([200, 200]);
    const refused = await edgeFetch(`http://a3.localhost:${port}/`);
    expect(refused.status).toBe(503);
    expect(refused.json()).toEqual({
      code: 'UNAVAILABLE',
      error: 'Worker "a3" cannot start now: this API key already has 2 workers running, all answering requests (the most one key may run at once); try again shortly.',
    });
    for (const h of held) h.close();
    await untilTrue('a3 to start once a runtime of alice is free', async () => (await edgeFetch(`http://a3.localhost:${port}/`)).status === 200);

    // Nothing in use for 3 s: every runtime is stopped, and the next request starts one again.
    await untilTrue(() => `the idle runtimes to stop (${running()} running)`, () => running() === 0);
    expect((await edgeFetch(`http://a6.localhost:${port}/`)).text).toBe('hello from a6');
    expect(running()).toBe(1);
  });
});

describe('managed-edge runtimes stay within the memory budget', { timeout: 300_000 }, () => {
  const budgetMb = 150;
  const server = useServer({ args: ['--allow-admin', adminToken, '--edge-limits', `memory_mb=${budgetMb},running_per_key=20,running_per_server=20`] });

  it('runs 8 workers of one key with their runtimes together within the budget', async () => {
    const pid = server.server.child.pid!;
    const key = await makeKey(server.url);
    let port = 0;
    let mostMb = 0;
    let mostRunning = 0;
    const names = Array.from({ length: 8 }, (_, i) => `m${i}`);
    for (const name of names) {
      const deployed = await call(server.url, 'PUT', `/v1/workers/${name}`, { token: key, body: { script } });
      expect(deployed.status, JSON.stringify(deployed.body)).toBe(200);
      port = Number(new URL(deployed.body.url).port);
    }
    for (const name of [...names, ...names]) {
      const answer = await edgeFetch(`http://${name}.localhost:${port}/`);
      expect(answer.text).toBe(`hello from ${name}`);
      const pids = workerdChildren(pid);
      mostRunning = Math.max(mostRunning, pids.length);
      mostMb = Math.max(mostMb, pids.reduce((sum, p) => sum + residentMb(p), 0));
    }
    // An idle workerd holds about 45 MB here: 8 of them would be over 350 MB.
    expect(mostRunning).toBeLessThan(names.length);
    expect(mostMb, `workerd resident memory at most ${Math.round(mostMb)} MB with ${mostRunning} running`).toBeLessThanOrEqual(budgetMb);
  });
});
