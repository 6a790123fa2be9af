// A subscription whose backlog is larger than a stream's buffer (60
// observations of 20 KB, about 1.2 MB) is streamed whole, in pieces written
// as the socket takes them, on both transports and over real sockets: before,
// the whole backlog was queued in one turn, passed the per-stream bound and
// the stream was cut before its first byte, and Last-Event-ID could never
// move past it.
import { describe, expect, it } from 'vitest';
import { useServer } from '../http/fixtures.ts';
import { call, createMonitor, publish, subscribe } from '../support/client.ts';
import { transports } from '../support/server-process.ts';
import { openSse } from '../support/sse.ts';
import { scaled } from '../support/time-scale.ts';

const count = 60;
const blob = 'x'.repeat(20_000);

describe.each(transports)('a large backlog over server-sent events on %s', (transport) => {
  const server = useServer({ transport });

  async function backlog() {
    const { id, ownerToken } = await createMonitor(server.base, { visibility: 'public' });
    const sub = await subscribe(server.base, { monitor: id, subscriber: 'agent:backlog', from: 'head' }, ownerToken);
    // Three batches of 20: each within the default 1 MB request body.
    for (let from = 0; from < count; from += 20) {
      const batch = Array.from({ length: 20 }, (_, i) => ({ type: 'test.big', subject: `s${from + i}`, data: { blob } }));
      const stored = await call(server.base, 'POST', `/monitors/${id}/observations`, { token: ownerToken, body: { observations: batch } });
      expect(stored.status).toBe(201);
    }
    return { id, ownerToken, sub, url: `${server.base}/subscriptions/${sub.id}/stream`, auth: { authorization: `Bearer ${sub.token}` } };
  }

  it('streams every observation of the backlog in order, then what is published next', async () => {
    const { id, ownerToken, url, auth } = await backlog();
    const stream = await openSse(url, auth);
    try {
      expect(stream.status).toBe(200);
      const events = await stream.waitFor(count, 'observation', scaled(30_000));
      expect(events.map((e) => JSON.parse(e.data).subject)).toEqual(Array.from({ length: count }, (_, i) => `s${i}`));
      const next = await publish(server.base, id, ownerToken, { type: 'test.tick', subject: 'after' });
      const all = await stream.waitFor(count + 1, 'observation', scaled(30_000));
      expect(all.at(-1)!.id).toBe(String(next.body.seq));
    } finally {
      stream.close();
    }
  }, scaled(60_000));

  it('streams a backlog whose observations grow: reads sized for small ones are cut to a piece, none skipped', async () => {
    const { id, ownerToken } = await createMonitor(server.base, { visibility: 'public' });
    const sub = await subscribe(server.base, { monitor: id, subscriber: 'agent:growing', from: 'head' }, ownerToken);
    const small = Array.from({ length: 10 }, (_, i) => ({ type: 'test.small', subject: `small${i}` }));
    const big = Array.from({ length: 15 }, (_, i) => ({ type: 'test.big', subject: `big${i}`, data: { blob: blob.repeat(3) } }));
    for (const observations of [small, big]) {
      expect((await call(server.base, 'POST', `/monitors/${id}/observations`, { token: ownerToken, body: { observations } })).status).toBe(201);
    }
    const stream = await openSse(`${server.base}/subscriptions/${sub.id}/stream`, { authorization: `Bearer ${sub.token}` });
    try {
      const events = await stream.waitFor(25, 'observation', scaled(30_000));
      expect(events.map((e) => JSON.parse(e.data).subject)).toEqual([...small, ...big].map((o) => o.subject));
    } finally {
      stream.close();
    }
  }, scaled(60_000));

  it('resumes with Last-Event-ID from the middle of the backlog', async () => {
    const { url, auth } = await backlog();
    const first = await openSse(url, auth);
    const seen = await first.waitFor(10, 'observation', scaled(30_000));
    first.close();
    const lastId = seen[9]!.id!;
    const resumed = await openSse(url, { ...auth, 'last-event-id': lastId });
    try {
      const rest = await resumed.waitFor(count - 10, 'observation', scaled(30_000));
      expect(rest[0]!.id).toBe(String(Number(lastId) + 1));
      expect(rest.map((e) => JSON.parse(e.data).subject)).toEqual(Array.from({ length: count - 10 }, (_, i) => `s${i + 10}`));
    } finally {
      resumed.close();
    }
  }, scaled(60_000));

  it('waits for a reader that pauses, holding nothing back: once it reads again it gets the whole backlog', async () => {
    const { url, auth } = await backlog();
    const stream = await openSse(url, auth);
    try {
      stream.response.pause();
      // The first piece fills the socket buffers; the stream then waits for the reader instead of cutting it.
      await new Promise((d) => setTimeout(d, 1000));
      stream.response.resume();
      const events = await stream.waitFor(count, 'observation', scaled(30_000));
      expect(new Set(events.map((e) => e.id)).size).toBe(count);
    } finally {
      stream.close();
    }
  }, scaled(60_000));
});
