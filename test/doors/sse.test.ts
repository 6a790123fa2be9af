import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createMonitor, publish, subscribe } from '../support/client.ts';
import { type ServerProcess, startServerProcess, transports } from '../support/server-process.ts';
import { openSse } from '../support/sse.ts';
import { scaled } from '../support/time-scale.ts';

// Most of the time here is spent waiting on the servers' timers (heartbeats, a stalled stream's 10 s):
// the two transports' servers are tested at once, each one's tests in order.
describe.concurrent.each(transports)('server-sent events over %s', (transport) => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServerProcess({ transport, args: ['--heartbeat', '1', '--retire-after-mute', '2', '--max-body', '16777216'] });
  });
  afterAll(() => server?.stop());

  async function setup() {
    const { id, ownerToken } = await createMonitor(server.base, { visibility: 'public' });
    const sub = await subscribe(server.base, { monitor: id, subscriber: `agent:${Math.random()}`, from: 'head' }, ownerToken);
    const streamUrl = `${server.base}/subscriptions/${sub.id}/stream`;
    return { id, ownerToken, sub, streamUrl, auth: { authorization: `Bearer ${sub.token}` } };
  }

  it.sequential('frames each observation with id, event and data, after one retry line', async () => {
    const { id, ownerToken, streamUrl, auth } = await setup();
    const stream = await openSse(streamUrl, auth);
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    const sent = await publish(server.base, id, ownerToken, { type: 'test.tick', subject: 'one' });
    const [first] = await stream.waitFor(1);
    expect(stream.retry).toBe(3000);
    expect(first!.id).toBe(String(sent.body.seq));
    const observation = JSON.parse(first!.data);
    expect(observation.type).toBe('test.tick');
    expect(observation.sequence).toBe(String(sent.body.seq).padStart(20, '0'));
    stream.close();
  });

  it.sequential('resumes with Last-Event-ID: nothing lost, nothing repeated', async () => {
    const { id, ownerToken, streamUrl, auth } = await setup();
    const first = await openSse(streamUrl, auth);
    for (let i = 0; i < 5; i++) await publish(server.base, id, ownerToken, { type: 'test.n', data: { i } });
    const seen = await first.waitFor(5);
    first.close();
    // Published while no one listens.
    for (let i = 5; i < 10; i++) await publish(server.base, id, ownerToken, { type: 'test.n', data: { i } });
    const second = await openSse(streamUrl, { ...auth, 'last-event-id': seen.at(-1)!.id! });
    const rest = await second.waitFor(5);
    // One more, published now: once it is here, anything sent twice before it would be too.
    await publish(server.base, id, ownerToken, { type: 'test.n', data: { i: 10 } });
    await second.waitFor(6);
    const numbers = [...seen, ...second.events.filter((e) => e.event === 'observation')]
      .map((e) => JSON.parse(e.data))
      .filter((o) => o.type === 'test.n')
      .map((o) => o.data.i);
    expect(numbers).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(rest.length).toBeGreaterThanOrEqual(5);
    second.close();
  });

  it.sequential('sends heartbeats when idle, and an open stream keeps its subscription from mute retirement', async () => {
    const { sub, streamUrl, auth } = await setup();
    const stream = await openSse(streamUrl, auth);
    const beats = await stream.waitFor(3, 'heartbeat', 8000);
    const beat = JSON.parse(beats[0]!.data);
    expect(Object.keys(beat).sort()).toEqual(['head', 'next']);
    // More than the 2 s mute period has passed while streaming: still live.
    const pulled = await call(server.base, 'GET', `/subscriptions/${sub.id}/pull`, { token: sub.token });
    expect(pulled.status).toBe(200);
    stream.close();
  });

  it.sequential('refuses a wrong token before streaming, with the protocol error body', async () => {
    const { streamUrl } = await setup();
    const refused = await openSse(streamUrl, { authorization: 'Bearer nope' });
    expect(refused.status).toBe(401);
    expect(refused.errorBody.code).toBe('UNAUTHORIZED');
    const badId = await openSse(streamUrl.replace('/stream', '/stream?cursor=abc'), {});
    expect(badId.status).toBe(400);
  });

  it.sequential('ends the stream with an error event when the subscription is retired', async () => {
    const { sub, streamUrl, auth, id, ownerToken } = await setup();
    const stream = await openSse(streamUrl, auth);
    await call(server.base, 'POST', `/subscriptions/${sub.id}/retire`, { token: sub.token, body: {} });
    await publish(server.base, id, ownerToken, { type: 'test.after' });
    const [error] = await stream.waitFor(1, 'error');
    expect(JSON.parse(error!.data).code).toBe('UNAVAILABLE');
    await stream.closed;
  });

  it.sequential('delivers one publish to 1,000 open streams', async () => {
    const { id, ownerToken, sub } = await createMonitorWithSub();
    const url = `${server.base}/subscriptions/${sub.id}/stream`;
    const streams = await Promise.all(
      Array.from({ length: 1000 }, () => openSse(url, { authorization: `Bearer ${sub.token}` })),
    );
    const sent = await publish(server.base, id, ownerToken, { type: 'test.fanout' });
    const arrived = await Promise.all(streams.map((s) => s.waitFor(1, 'observation', 20_000)));
    expect(arrived.every((events) => events.some((e) => e.id === String(sent.body.seq)))).toBe(true);
    for (const s of streams) s.close();

    async function createMonitorWithSub() {
      const monitor = await createMonitor(server.base, { visibility: 'public' });
      const s = await subscribe(server.base, { monitor: monitor.id, subscriber: 'agent:fan', from: 'head' }, monitor.ownerToken);
      return { id: monitor.id, ownerToken: monitor.ownerToken, sub: s };
    }
  }, scaled(60_000));

  it.sequential('lets go of a reader that stops reading, without holding its backlog in memory', async () => {
    const { id, ownerToken, streamUrl, auth } = await setup();
    const stream = await openSse(streamUrl, auth);
    stream.response.pause();
    const big = 'x'.repeat(60_000);
    const batch = Array.from({ length: 100 }, () => ({ type: 'test.big', data: { big } }));
    // About 6 MB per batch: far past what the socket buffers hold. The stream writes a piece at a
    // time as the socket takes it, so the server holds at most a piece for this reader.
    for (let i = 0; i < 8; i++) {
      const reply = await call(server.base, 'POST', `/monitors/${id}/observations`, { token: ownerToken, body: { observations: batch } });
      expect(reply.status).toBe(201);
    }
    // A socket that takes nothing for 10 s is closed. A paused client cannot see that, but the
    // server can: with the stream gone the subscription is retired once its 2 s mute period passes.
    const until = Date.now() + scaled(45_000);
    for (;;) {
      const state = await call(server.base, 'GET', `/monitors/${id}/state`, { token: ownerToken });
      if (state.body.counters.subscriptions_active === 0) break;
      if (Date.now() > until) throw new Error('the stalled stream was not let go');
      await new Promise((d) => setTimeout(d, 250));
    }
    stream.response.resume();
    await stream.closed;
    expect(stream.events.filter((e) => e.event === 'observation').length).toBeLessThan(800);
    const snapshotOk = await call(server.base, 'GET', '/discover');
    expect(snapshotOk.status).toBe(200);
  }, scaled(90_000));
});
