// `--inspect` (§19): a receiver from @statelyai/inspect connects to the
// inspector relay and sees the actors of a monitor, a subscription, a lease
// and a source arrive, with their state transitions.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWebSocketReceiver, type StatelyInspectionEvent } from '@statelyai/inspect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type RunningServer, startServer } from '../../src/server.ts';
import { call } from '../support/client.ts';
import { untilTrue } from '../support/until.ts';

let server: RunningServer;
let base: string;
beforeAll(async () => {
  server = await startServer({ port: 0, inspectPort: 0, cloud: false, log: () => undefined });
  base = `${server.url}/mp/v0`;
});
afterAll(() => server.close());

describe('vigil serve --inspect', () => {
  it('streams monitor, subscription, lease and source actors and their transitions', async () => {
    expect(server.inspectUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    const events: StatelyInspectionEvent[] = [];
    const receiver = createWebSocketReceiver({ server: server.inspectUrl! });
    receiver.subscribe((event) => events.push(event));
    await new Promise((d) => setTimeout(d, 300));

    const target = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((d) => target.listen(0, '127.0.0.1', d));
    const created = await call(base, 'POST', '/monitors', {
      body: { id: 'inspected', capabilities: ['observe', 'act'], source: { kind: 'http', url: `http://127.0.0.1:${(target.address() as AddressInfo).port}/`, interval_s: 1 } },
    });
    const owner = created.body.owner_token;
    await call(base, 'POST', '/monitors/inspected/observations', { token: owner, body: { type: 'work.item', subject: 'task-1' } });
    const sub = await call(base, 'POST', '/subscriptions', { token: owner, body: { monitor: 'inspected', subscriber: 'agent:w', capabilities: ['act'] } });
    const claimed = await call(base, 'POST', `/subscriptions/${sub.body.subscription.id}/leases/claim`, { token: sub.body.token, body: { subject: 'task-1' } });
    expect(claimed.status).toBe(201);

    const names = () => new Set(events.filter((e) => e.type === '@xstate.actor').map((e) => (e as { name: string }).name));
    const sessionOf = (name: string) => (events.find((e) => e.type === '@xstate.actor' && (e as { name: string }).name === name) as { sessionId: string }).sessionId;
    const statesOf = (name: string) =>
      events.filter((e) => e.type === '@xstate.snapshot' && e.sessionId === sessionOf(name)).map((e) => JSON.stringify((e as { snapshot: { value: unknown } }).snapshot.value));
    // The pause stops the source: it is paused once the source has made its first contact (watching).
    await untilTrue('the source watching', () => names().has('source:inspected') && statesOf('source:inspected').some((s) => s.includes('watching')));
    await call(base, 'POST', '/monitors/inspected/pause', { token: owner, body: { reason: 'inspected' } });

    await untilTrue('the four actors', () => {
      const seen = names();
      return ['monitor:inspected', `subscription:${sub.body.subscription.id}`, 'lease:inspected:task-1', 'source:inspected'].every((n) => seen.has(n));
    });

    await untilTrue('the monitor pausing', () => statesOf('monitor:inspected').includes('"paused"'));
    await untilTrue('the lease being held', () => statesOf('lease:inspected:task-1').includes('"held"'));
    // Events name what happened to each actor.
    const leaseEvents = events.filter((e) => e.type === '@xstate.event' && e.sessionId === sessionOf('lease:inspected:task-1'));
    expect(leaseEvents.map((e) => (e as { event: { type: string } }).event.type)).toContain('CLAIM');
    // Token hashes never reach the inspector.
    expect(JSON.stringify(events)).not.toMatch(/tokenHash/);
    target.closeAllConnections();
    await new Promise((d) => target.close(d));
  });

  it('serves a page that opens the Stately inspector, and never opens a browser itself', async () => {
    const page = await fetch(server.inspectUrl!.replace('ws://', 'http://'));
    const html = await page.text();
    expect(html).toContain('https://stately.ai/inspect');
    expect(html).toContain("new WebSocket('ws://' + location.host + '/'");
  });
});

describe('the inspector relay (issue 42)', () => {
  /** A plain WebSocket client of the relay, keeping the text of what it received. */
  const viewer = () =>
    new Promise<{ socket: WebSocket; text: () => string; closed: Promise<number> }>((done, fail) => {
      const socket = new WebSocket(server.inspectUrl!);
      let text = '';
      socket.on('message', (data) => (text += `${data.toString()}\n`));
      const closed = new Promise<number>((d) => socket.once('close', (code) => d(code)));
      socket.once('open', () => done({ socket, text: () => text, closed }));
      socket.once('error', fail);
    });

  it("relays and replays only the server's own events, and disconnects a client that sends more than 4 MiB", { timeout: 60_000 }, async () => {
    const [forger, watcher] = [await viewer(), await viewer()];
    const forged = (n: number) => JSON.stringify({ type: '@xstate.actor', name: `forged-${n}`, sessionId: `forged-${n}`, createdAt: '0', _version: '1.0.0', rootId: 'x' });
    for (let n = 0; n < 100; n++) forger.socket.send(forged(n));
    // The barrier: an actor the server made after the forgeries reaches the watcher and a late viewer.
    await call(base, 'POST', '/monitors', { body: { id: 'after-forgery' } });
    await untilTrue('the server\'s own event', () => watcher.text().includes('monitor:after-forgery'));
    const late = await viewer();
    await untilTrue('the replay', () => late.text().includes('monitor:after-forgery'));
    for (const client of [watcher, late, forger]) expect(client.text()).not.toContain('forged-');

    forger.socket.send('x'.repeat(10 << 20));
    expect(await forger.closed).toBe(1009);
    await call(base, 'POST', '/monitors', { body: { id: 'after-oversize' } });
    await untilTrue('the relay to go on', () => watcher.text().includes('monitor:after-oversize'));
    for (const client of [watcher, late]) client.socket.close();
  });
});
