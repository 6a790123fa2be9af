// Subscribe, re-key, pull, ack, seek, renew and retire (§8, §9).
import { describe, expect, it } from 'vitest';
import { call, createMonitor, publish, subscribe } from '../support/client.ts';
import { useDoor } from '../support/door.ts';
import { transports } from '../support/server-process.ts';
import { fresh, headOf, observationAt, useServer, vigilType } from './fixtures.ts';

describe.each(transports)('subscriptions and pull over %s', (transport) => {
  const server = useServer({ transport });
  const pull = (sub: { id: string; token: string }, query = '') =>
    call(server.base, 'GET', `/subscriptions/${sub.id}/pull${query}`, { token: sub.token });
  const post = (sub: { id: string; token: string }, action: string, body: unknown = {}) =>
    call(server.base, 'POST', `/subscriptions/${sub.id}/${action}`, { token: sub.token, body });

  /** A monitor with `count` observations of type app.n (subjects s1…), and its owner token. */
  async function monitorWith(count: number, create: Record<string, unknown> = {}) {
    const m = await createMonitor(server.base, { types: ['app.n', 'app.a', 'app.b'], ...create });
    for (let i = 1; i <= count; i++) await publish(server.base, m.id, m.ownerToken, { type: 'app.n', subject: `s${i}` });
    return m;
  }

  it('serves the subscription with every field and a token shown once', async () => {
    const { id, ownerToken } = await monitorWith(2);
    const reply = await call(server.base, 'POST', '/subscriptions', { token: ownerToken, body: { monitor: id, subscriber: 'svc' } });
    expect(reply.status).toBe(201);
    expect(typeof reply.body.token).toBe('string');
    expect(reply.body.subscription).toMatchObject({
      id: expect.any(String),
      monitor: id,
      subscriber: 'svc',
      capabilities: ['observe'],
      protocol: 'pull',
      active: true,
      filter: {},
      reset_policy: 'none',
      retire_after_mute_seconds: null,
      last_pull: null,
    });
    expect(reply.body.subscription.cursor).toBeLessThanOrEqual(1);
    // From the earliest: configured, two publishes and the subscribed entry are all ahead.
    expect(reply.body.subscription.lag).toBe(4);
    const entry = await observationAt(server.base, id, ownerToken, 4);
    expect(entry.type).toBe(vigilType('subscribed'));
  });

  it('grants capabilities by bearer: strangers get default_grant, privileged tokens any of the monitor', async () => {
    const created = await call(server.base, 'POST', '/monitors', {
      body: { visibility: 'public', capabilities: ['observe', 'react', 'act'], subscribe_token: true },
    });
    const id = created.body.monitor.id;
    const stranger = await call(server.base, 'POST', '/subscriptions', { body: { monitor: id, subscriber: 'x', capabilities: ['act'] } });
    expect(stranger.status).toBe(403);
    expect(stranger.body).toMatchObject({ code: 'CAPABILITY_MISSING', granted: ['observe'], monitor_capabilities: ['observe', 'react', 'act'] });
    expect((await subscribe(server.base, { monitor: id, subscriber: 'y' })).reply.body.subscription.capabilities).toEqual(['observe']);
    const owner = await subscribe(server.base, { monitor: id, subscriber: 'o', capabilities: ['observe', 'act'] }, created.body.owner_token);
    expect(owner.reply.body.subscription.capabilities).toEqual(['observe', 'act']);
    const peer = await subscribe(server.base, { monitor: id, subscriber: 'p', capabilities: ['react'] }, created.body.subscribe_token);
    expect(peer.reply.body.subscription.capabilities).toEqual(['react']);

    const narrow = await createMonitor(server.base, { visibility: 'public' });
    const beyond = await call(server.base, 'POST', '/subscriptions', {
      token: narrow.ownerToken,
      body: { monitor: narrow.id, subscriber: 'o', capabilities: ['act'] },
    });
    expect(beyond.status).toBe(403);
    expect(beyond.body.code).toBe('CAPABILITY_MISSING');
    const vocab = await call(server.base, 'POST', '/subscriptions', { body: { monitor: narrow.id, subscriber: 'v', capabilities: ['sing'] } });
    expect(vocab.status).toBe(400);
    expect(vocab.body.code).toBe('UNKNOWN_VOCABULARY');
  });

  it('a private monitor is 404 to a stranger subscribing', async () => {
    const { id } = await createMonitor(server.base, {});
    const reply = await call(server.base, 'POST', '/subscriptions', { body: { monitor: id, subscriber: 'x' } });
    expect(reply.status).toBe(404);
    expect(reply.body.code).toBe('NOT_FOUND');
  });

  it('from head, earliest and an integer set the starting cursor', async () => {
    const { id, ownerToken } = await monitorWith(3);
    const atHead = await subscribe(server.base, { monitor: id, subscriber: 'h', from: 'head' }, ownerToken);
    // "head" starts after the subscription's own subscribed record.
    expect(atHead.reply.body.subscription.cursor).toBe((await headOf(server.base, id, ownerToken)) + 1);
    const fromTwo = await subscribe(server.base, { monitor: id, subscriber: 'i', from: 3 }, ownerToken);
    expect(fromTwo.reply.body.subscription.cursor).toBe(3);
    const fromText = await subscribe(server.base, { monitor: id, subscriber: 't', from: '2' }, ownerToken);
    expect(fromText.reply.body.subscription.cursor).toBe(2);
    const earliest = await subscribe(server.base, { monitor: id, subscriber: 'e', from: 'earliest' }, ownerToken);
    const page = await pull(earliest, '?limit=1000');
    expect(Number(page.body.observations[0].id)).toBe(1);
    const headPage = await pull(atHead);
    // Only the later subscribed entries are after the head it started from.
    expect(headPage.body.observations.every((o: { type: string }) => o.type === vigilType('subscribed'))).toBe(true);
    for (const from of ['middle', -1, 1.5]) {
      const bad = await call(server.base, 'POST', '/subscriptions', { token: ownerToken, body: { monitor: id, subscriber: fresh('b'), from } });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatch(/from/);
    }
  });

  it('re-keying keeps the id and cursor, voids the old token, and needs the old or owner token', async () => {
    const { id, ownerToken } = await monitorWith(3, { visibility: 'public' });
    const first = await subscribe(server.base, { monitor: id, subscriber: 'worker' });
    await post(first, 'ack', { cursor: 3 });

    const stranger = await call(server.base, 'POST', '/subscriptions', { body: { monitor: id, subscriber: 'worker' } });
    expect(stranger.status).toBe(401);
    expect(stranger.body.code).toBe('UNAUTHORIZED');

    const byOld = await subscribe(server.base, { monitor: id, subscriber: 'worker' }, first.token);
    expect(byOld.id).toBe(first.id);
    expect(byOld.token).not.toBe(first.token);
    expect(byOld.reply.body.subscription.cursor).toBe(3);
    expect((await pull(first)).status).toBe(401);
    expect((await pull(byOld)).status).toBe(200);

    const byOwner = await subscribe(server.base, { monitor: id, subscriber: 'worker' }, ownerToken);
    expect(byOwner.id).toBe(first.id);
    expect(byOwner.reply.body.subscription.cursor).toBe(3);
    expect((await pull(byOld)).status).toBe(401);
  });

  it('retire keeps the cursor and writes subscription_retired; re-subscribing reactivates it', async () => {
    const { id, ownerToken } = await monitorWith(3);
    const sub = await subscribe(server.base, { monitor: id, subscriber: 'r' }, ownerToken);
    await post(sub, 'ack', { cursor: 4 });
    const retired = await post(sub, 'retire', { reason: 'done' });
    expect(retired.status).toBe(200);
    expect(retired.body.subscription).toMatchObject({ active: false, cursor: 4 });
    const feedAfter = await headOf(server.base, id, ownerToken);
    const entry = await observationAt(server.base, id, ownerToken, feedAfter);
    expect(entry.type).toBe(vigilType('subscription_retired'));
    expect(entry.data.payload).toMatchObject({ subscription: sub.id });
    const refused = await pull(sub);
    expect(refused.status).toBe(404);
    expect(refused.body).toMatchObject({ code: 'NOT_FOUND', retired: true, cursor: 4 });
    const again = await subscribe(server.base, { monitor: id, subscriber: 'r' }, sub.token);
    expect(again.id).toBe(sub.id);
    expect(again.reply.body.subscription).toMatchObject({ active: true, cursor: 4 });
    expect((await pull(again)).status).toBe(200);
  });

  it('pull honours limit and next, never moves the cursor, and flags redelivery', async () => {
    const { id, ownerToken } = await monitorWith(5);
    const sub = await subscribe(server.base, { monitor: id, subscriber: 'p', from: 2 }, ownerToken);
    const first = await pull(sub, '?limit=2');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ subscription: sub.id, monitor: id, cursor: 2, head: 7, retention_floor: 0, redelivered: 0 });
    expect(first.body.observations.map((o: { id: string }) => o.id)).toEqual(['2', '3']);
    expect(first.body.next).toBe(4);
    expect(first.body.lag).toBe(6);
    expect(first.body.observations.some((o: { redelivered?: boolean }) => o.redelivered)).toBe(false);

    const second = await pull(sub, '?limit=3');
    expect(second.body.cursor).toBe(2);
    expect(second.body.observations.map((o: { id: string }) => o.id)).toEqual(['2', '3', '4']);
    expect(second.body.redelivered).toBe(2);
    expect(second.body.observations.map((o: { redelivered?: boolean }) => o.redelivered === true)).toEqual([true, true, false]);

    const acked = await post(sub, 'ack', { cursor: second.body.next });
    expect(acked.status).toBe(200);
    expect(acked.body.subscription.cursor).toBe(5);
    const rest = await pull(sub, '?limit=1000');
    expect(rest.body.observations.map((o: { id: string }) => o.id)).toEqual(['5', '6', '7']);
    expect(rest.body.lag).toBe(3);
    expect(rest.body.next).toBe(8);
  });

  it('a replay cursor reads from there and leaves the stored cursor alone', async () => {
    const { id, ownerToken } = await monitorWith(4);
    const sub = await subscribe(server.base, { monitor: id, subscriber: 'replay', from: 'head' }, ownerToken);
    const stored = sub.reply.body.subscription.cursor;
    const later = await publish(server.base, id, ownerToken, { type: 'app.a' });
    expect(later.body.seq).toBe(stored);
    const replay = await pull(sub, '?cursor=2&limit=2');
    expect(replay.body.observations.map((o: { id: string }) => o.id)).toEqual(['2', '3']);
    expect(replay.body.cursor).toBe(stored);
    expect(replay.body.next).toBe(4);
    const normal = await pull(sub);
    expect(normal.body.cursor).toBe(stored);
    expect(normal.body.observations.map((o: { id: string }) => Number(o.id))).toEqual([stored]);
  });

  it('lag is exact under the stored filter, and next never skips a match', async () => {
    const { id, ownerToken } = await monitorWith(0);
    const sub = await subscribe(server.base, { monitor: id, subscriber: 'only-a', filter: { types: ['app.a'] } }, ownerToken);
    for (const type of ['app.a', 'app.b', 'app.a', 'app.b', 'app.b', 'app.a']) await publish(server.base, id, ownerToken, { type });
    const page = await pull(sub, '?limit=2');
    expect(page.body.lag).toBe(3);
    expect(page.body.observations.map((o: { type: string }) => o.type)).toEqual(['app.a', 'app.a']);
    const secondA = Number(page.body.observations[1].id);
    expect(page.body.next).toBe(secondA + 1);
    await post(sub, 'ack', { cursor: page.body.next });
    const rest = await pull(sub);
    expect(rest.body.lag).toBe(1);
    expect(rest.body.observations).toHaveLength(1);
    await post(sub, 'ack', { cursor: rest.body.next });
    const empty = await pull(sub);
    expect(empty.body.observations).toEqual([]);
    expect(empty.body.lag).toBe(0);
    expect(empty.body.next).toBeLessThanOrEqual(empty.body.head + 1);
  });

  it('inline filters only narrow; unknown keys and widening are INVALID_FILTER', async () => {
    const { id, ownerToken } = await monitorWith(0);
    for (const [type, subject, region] of [
      ['app.a', 'x', 'eu'],
      ['app.b', 'x', 'us'],
      ['app.a', 'y', 'us'],
    ]) {
      await publish(server.base, id, ownerToken, { type, subject, tags: { region } });
    }
    const sub = await subscribe(server.base, { monitor: id, subscriber: 'f', filter: { types: ['app.a', 'app.b'] } }, ownerToken);
    const bySubject = await pull(sub, '?subjects=x');
    expect(bySubject.body.observations.map((o: { type: string }) => o.type)).toEqual(['app.a', 'app.b']);
    const byType = await pull(sub, '?types=app.a');
    expect(byType.body.observations.map((o: { subject: string }) => o.subject)).toEqual(['x', 'y']);
    const byTag = await pull(sub, '?%23region=us');
    expect(byTag.body.observations.map((o: { type: string }) => o.type)).toEqual(['app.b', 'app.a']);
    const byText = await pull(sub, '?text=Y');
    expect(byText.body.observations.map((o: { subject: string }) => o.subject)).toEqual(['y']);

    const unknown = await pull(sub, '?colour=red');
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe('INVALID_FILTER');
    expect(unknown.body.known_keys).toEqual(expect.arrayContaining(['types', 'subjects', 'actors', 'tiers', 'since', 'text']));
    expect(JSON.stringify(unknown.body.invalid)).toMatch(/colour/);

    const widen = await pull(sub, `?types=${vigilType('configured')}`);
    expect(widen.status).toBe(400);
    expect(widen.body.code).toBe('INVALID_FILTER');
    expect(widen.body.error).toMatch(/types/);
    const unseen = await pull(sub, '?types=never.seen.type');
    expect(unseen.status).toBe(400);
    expect(unseen.body.code).toBe('INVALID_FILTER');
    expect(unseen.body.known_types).toEqual(expect.arrayContaining(['app.a', 'app.b']));
    const badTier = await pull(sub, '?tiers=golden');
    expect(badTier.status).toBe(400);
    expect(badTier.body.code).toBe('INVALID_FILTER');
  });

  it('a bad stored filter is refused at subscribe with INVALID_FILTER', async () => {
    const { id, ownerToken } = await monitorWith(0);
    const reply = await call(server.base, 'POST', '/subscriptions', {
      token: ownerToken,
      body: { monitor: id, subscriber: 'bad', filter: { flavour: 'x' } },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('INVALID_FILTER');
    expect(reply.body.known_keys).toContain('types');
  });

  it('bad wait, limit and cursor are 400 INVALID naming the field', async () => {
    const { id, ownerToken } = await monitorWith(1);
    const sub = await subscribe(server.base, { monitor: id, subscriber: 'q' }, ownerToken);
    const cases: Array<[string, string]> = [
      ['?wait=51', 'wait'],
      ['?wait=-1', 'wait'],
      ['?wait=soon', 'wait'],
      ['?wait=1.5', 'wait'],
      ['?limit=0', 'limit'],
      ['?limit=1001', 'limit'],
      ['?limit=ten', 'limit'],
      ['?cursor=abc', 'cursor'],
      ['?cursor=-3', 'cursor'],
      ['?cursor=2.5', 'cursor'],
      ['?cursor=1e3', 'cursor'],
      ['?cursor=9999999999999999', 'cursor'],
    ];
    for (const [query, field] of cases) {
      const reply = await pull(sub, query);
      expect({ query, status: reply.status, code: reply.body.code }).toEqual({ query, status: 400, code: 'INVALID' });
      expect(reply.body.error).toContain(field);
    }
  });

  it('ack: a repeated equal ack answers the same reply but for head and lag, which count a refused write recorded meanwhile (docs §9)', async () => {
    const { id, ownerToken } = await monitorWith(3);
    const sub = await subscribe(server.base, { monitor: id, subscriber: 'repeat' }, ownerToken);
    const first = await post(sub, 'ack', { cursor: 3 });
    expect(first.status).toBe(200);
    const refused = await post(sub, 'ack', { cursor: 2 });
    expect(refused.status).toBe(409);
    // The refusal is itself an observation of the monitor: head moved.
    expect(refused.body.rejected_seq).toBe(await headOf(server.base, id, ownerToken));
    const again = await post(sub, 'ack', { cursor: 3 });
    expect(again.status).toBe(200);
    expect(again.body.subscription.lag).toBe(first.body.subscription.lag + 1);
    expect([again.body.head, again.body.lag]).toEqual([first.body.head + 1, first.body.lag + 1]);
    const live = (body: Record<string, any>) => ({ ...body, head: null, lag: null, subscription: { ...body.subscription, lag: null } });
    expect(live(again.body)).toEqual(live(first.body));
  });

  it('ack: backwards is CURSOR_BACKWARDS, above head + 1 is INVALID, equal changes nothing', async () => {
    const { id, ownerToken } = await monitorWith(3);
    const sub = await subscribe(server.base, { monitor: id, subscriber: 'a' }, ownerToken);
    const head = await headOf(server.base, id, ownerToken);
    const ok = await post(sub, 'ack', { cursor: 3 });
    expect(ok.status).toBe(200);
    expect(ok.body.cursor).toBe(3);
    const same = await post(sub, 'ack', { cursor: 3 });
    expect(same.status).toBe(200);
    expect(same.body).toEqual(ok.body);
    const back = await post(sub, 'ack', { cursor: 2 });
    expect(back.status).toBe(409);
    expect(back.body.code).toBe('CURSOR_BACKWARDS');
    const above = await post(sub, 'ack', { cursor: head + 5 });
    expect(above.status).toBe(400);
    expect(above.body.code).toBe('INVALID');
    expect(above.body.error).toMatch(/cursor/);
    const edge = await post(sub, 'ack', { cursor: '5' });
    expect(edge.status).toBe(200);
    expect(edge.body.cursor).toBe(5);
    for (const cursor of [-1, 1.5, 'x', null]) {
      const bad = await post(sub, 'ack', { cursor });
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe('INVALID');
    }
    expect((await pull(sub)).body.cursor).toBe(5);
  });

  it('seek moves the cursor either way and writes a subscribed observation', async () => {
    const { id, ownerToken } = await monitorWith(4);
    const sub = await subscribe(server.base, { monitor: id, subscriber: 's' }, ownerToken);
    await post(sub, 'ack', { cursor: 5 });
    const back = await post(sub, 'seek', { cursor: 2, reason: 'reprocess' });
    expect(back.status).toBe(200);
    expect(back.body.subscription.cursor).toBe(2);
    const entry = await observationAt(server.base, id, ownerToken, back.body.seq);
    expect(entry.type).toBe(vigilType('subscribed'));
    expect(entry.data.payload).toMatchObject({ reason: 'reprocess', cursor: 2 });
    expect((await pull(sub)).body.observations[0].id).toBe('2');
    const noReason = await post(sub, 'seek', { cursor: 3 });
    expect(noReason.status).toBe(400);
    expect(noReason.body.error).toMatch(/reason/);
    const refusal = await observationAt(server.base, id, ownerToken, noReason.body.rejected_seq);
    expect(refusal).toMatchObject({ type: vigilType('rejected'), actor: 's', data: { payload: { code: 'INVALID' } } });
    expect((await pull(sub)).body.cursor).toBe(2);
  });

  it('renew returns a new token and voids the old one at once', async () => {
    const { id, ownerToken } = await monitorWith(1);
    const sub = await subscribe(server.base, { monitor: id, subscriber: 'n' }, ownerToken);
    const renewed = await post(sub, 'renew');
    expect(renewed.status).toBe(200);
    const token = renewed.body.token as string;
    expect(token).not.toBe(sub.token);
    const old = await pull(sub);
    expect(old.status).toBe(401);
    expect(old.body.code).toBe('UNAUTHORIZED');
    expect((await pull({ id: sub.id, token })).status).toBe(200);
  });

  it('subscription routes need the subscription token', async () => {
    const { id, ownerToken } = await monitorWith(1);
    const sub = await subscribe(server.base, { monitor: id, subscriber: 'tok' }, ownerToken);
    for (const token of ['', 'wrong', ownerToken]) {
      expect((await pull({ id: sub.id, token })).status).toBe(401);
      expect((await post({ id: sub.id, token }, 'ack', { cursor: 1 })).status).toBe(401);
    }
    expect((await pull({ id: 'sub-nope', token: sub.token })).status).toBe(404);
  });

  it('a waiting pull with nothing to deliver ends after wait seconds with an empty page', async () => {
    const { id, ownerToken } = await monitorWith(0);
    const sub = await subscribe(server.base, { monitor: id, subscriber: 'idle', from: 'head' }, ownerToken);
    const started = performance.now();
    const reply = await pull(sub, '?wait=1');
    const elapsed = performance.now() - started;
    expect(reply.status).toBe(200);
    expect(reply.body.observations).toEqual([]);
    expect(elapsed).toBeGreaterThanOrEqual(900);
  });
});

describe('a waiting pull, on a manual clock', () => {
  const door = useDoor();

  it('waits through a publish that does not match, and answers a matching one at once, not at its wait limit', async () => {
    const { id, ownerToken } = await createMonitor(door.base, { types: ['app.a', 'app.b'] });
    const sub = await subscribe(door.base, { monitor: id, subscriber: 'w', from: 'head', filter: { types: ['app.a'] } }, ownerToken);
    let answered = false;
    const waiting = call(door.base, 'GET', `/subscriptions/${sub.id}/pull?wait=10`, { token: sub.token }).then((reply) => {
      answered = true;
      return reply;
    });
    await door.base.settle();
    // A publish that does not match leaves the pull waiting.
    await publish(door.base, id, ownerToken, { type: 'app.b' });
    await door.base.settle();
    expect(answered).toBe(false);
    const published = await publish(door.base, id, ownerToken, { type: 'app.a', subject: 'now' });
    expect(published.status).toBe(201);
    // Answered with no time passing on the server's clock: the publish woke it.
    const reply = await waiting;
    expect(reply.body.observations.map((o: { subject: string }) => o.subject)).toEqual(['now']);
  });

  it('answers an empty page when its wait runs out', async () => {
    const { id, ownerToken } = await createMonitor(door.base, { types: ['app.a', 'app.b'] });
    const sub = await subscribe(door.base, { monitor: id, subscriber: 'w', from: 'head' }, ownerToken);
    let answered = false;
    const waiting = call(door.base, 'GET', `/subscriptions/${sub.id}/pull?wait=10`, { token: sub.token }).then((reply) => {
      answered = true;
      return reply;
    });
    await door.base.clock.advance(9999);
    expect(answered).toBe(false);
    await door.base.clock.advance(1);
    const reply = await waiting;
    expect(reply.status).toBe(200);
    expect(reply.body.observations).toEqual([]);
  });
});
