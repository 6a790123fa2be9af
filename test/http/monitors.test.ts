// Discover, create, read, visibility and configure (protocol §2, §3, §7).
import { describe, expect, it } from 'vitest';
import { call, createMonitor, publish, subscribe } from '../support/client.ts';
import { useDoor } from '../support/door.ts';
import { transports } from '../support/server-process.ts';
import { fresh, headOf, observationAt, path, readFeed, useServer, vigilType } from './fixtures.ts';

describe.each(transports)('monitors over %s', (transport) => {
  const server = useServer({ transport });

  it('discover answers the protocol shape without a token', async () => {
    const reply = await call(server.base, 'GET', '/discover');
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      protocol: 'monitor-protocol',
      supportedVersions: ['0.1'],
      serverInfo: { name: 'vigil', version: expect.any(String) },
      capabilities: {
        monitors: { publish: true },
        feeds: { pull: true, sse: true, mcp: true, http: false },
        leases: { delivery_count_limit: 5 },
        extensions: { 'ai.vigil/monitors': { version: '0.1' } },
      },
      limits: {
        max_limit: 1000,
        default_limit: 50,
        max_wait_seconds: 50,
        max_body_bytes: 1048576,
        retire_after_mute_seconds_default: 604800,
      },
      ttlMs: 3600000,
    });
  });

  it('create fills every default and writes a configured observation', async () => {
    const reply = await call(server.base, 'POST', '/monitors', { body: {} });
    expect(reply.status).toBe(201);
    const { monitor, owner_token } = reply.body;
    expect(typeof owner_token).toBe('string');
    expect(reply.body).not.toHaveProperty('subscribe_token');
    expect(monitor.id).toMatch(/^mon-[0-9a-f]{8}$/);
    expect(monitor).toMatchObject({
      name: monitor.id,
      description: null,
      owner: 'agent:owner',
      visibility: 'private',
      horizon: 'event',
      capabilities: ['observe'],
      default_grant: ['observe'],
      source: { kind: 'log' },
      types: [],
      filter: {},
      ttl_seconds: null,
      retire_after_mute_seconds: null,
      attested: false,
      version: 1,
      active: true,
      status: 'active',
      head: 1,
      retention_floor: 0,
    });
    expect(monitor.limits.max_limit).toBe(1000);
    expect(monitor.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const configured = await observationAt(server.base, monitor.id, owner_token, 1);
    expect(configured.type).toBe(vigilType('configured'));
    expect(configured.data.payload.action).toBe('create');
  });

  it('default_grant is observe intersected with the capabilities', async () => {
    const { reply } = await createMonitor(server.base, { capabilities: ['act'] });
    expect(reply.body.monitor.default_grant).toEqual([]);
  });

  it('a taken id is 409 DUPLICATE and the first monitor is untouched', async () => {
    const id = fresh('dup');
    const first = await createMonitor(server.base, { id, name: 'first' });
    const second = await call(server.base, 'POST', '/monitors', { body: { id, name: 'second' } });
    expect(second.status).toBe(409);
    expect(second.body.code).toBe('DUPLICATE');
    const read = await call(server.base, 'GET', path(id), { token: first.ownerToken });
    expect(read.body.name).toBe('first');
  });

  it('reports every vocabulary error of one request together', async () => {
    const id = fresh('vocab');
    const reply = await call(server.base, 'POST', '/monitors', {
      body: { id, horizon: 'x', visibility: 'secret', capabilities: ['observe', 'fly'], source: { kind: 'pigeon' } },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('UNKNOWN_VOCABULARY');
    // Each entry names the field (a path such as `capabilities.1`) and the refused value.
    const invalid = [...reply.body.invalid].sort();
    expect(invalid).toHaveLength(4);
    expect(invalid[0]).toMatch(/^capabilities(\.1)?:fly$/);
    expect(invalid.slice(1)).toEqual(['horizon:x', 'source.kind:pigeon', 'visibility:secret']);
    expect(reply.body.known.horizon).toEqual(['event', 'minute', 'hour', 'day', 'week', 'month']);
    expect(reply.body.known.visibility).toEqual(['private', 'shared', 'public']);
    expect((await call(server.base, 'GET', path(id))).status).toBe(404);
  });

  it('private is 404 without the owner token, never 401', async () => {
    const { id, ownerToken } = await createMonitor(server.base, { id: fresh('priv') });
    const other = await createMonitor(server.base, {});
    for (const token of [undefined, 'garbage', other.ownerToken]) {
      const get = await call(server.base, 'GET', path(id), { token });
      expect(get.status).toBe(404);
      expect(get.body.code).toBe('NOT_FOUND');
      expect((await call(server.base, 'GET', path(id, '/state'), { token })).status).toBe(404);
    }
    expect((await call(server.base, 'GET', path(id), { token: ownerToken })).status).toBe(200);
    const listed = await call(server.base, 'GET', '/monitors', { token: other.ownerToken });
    expect(listed.body.monitors.map((m: { id: string }) => m.id)).not.toContain(id);
    const own = await call(server.base, 'GET', '/monitors', { token: ownerToken });
    expect(own.body.monitors.map((m: { id: string }) => m.id)).toContain(id);
  });

  it('shared needs the owner or subscribe token; a subscription token does not widen it', async () => {
    const created = await call(server.base, 'POST', '/monitors', { body: { visibility: 'shared', subscribe_token: true } });
    const { id } = created.body.monitor;
    const subscribeToken = created.body.subscribe_token as string;
    expect(typeof subscribeToken).toBe('string');
    expect((await call(server.base, 'GET', path(id))).status).toBe(404);
    expect((await call(server.base, 'GET', path(id), { token: subscribeToken })).status).toBe(200);
    expect((await call(server.base, 'GET', path(id, '/state'), { token: subscribeToken })).status).toBe(200);
    expect((await call(server.base, 'GET', path(id), { token: created.body.owner_token })).status).toBe(200);
    const sub = await subscribe(server.base, { monitor: id, subscriber: 'peer' }, subscribeToken);
    expect((await call(server.base, 'GET', path(id), { token: sub.token })).status).toBe(404);
    const listed = await call(server.base, 'GET', '/monitors', { token: subscribeToken });
    expect(listed.body.monitors.map((m: { id: string }) => m.id)).toContain(id);
  });

  it('public is readable and listed for anyone', async () => {
    const { id } = await createMonitor(server.base, { visibility: 'public' });
    expect((await call(server.base, 'GET', path(id))).status).toBe(200);
    expect((await call(server.base, 'GET', path(id, '/state'))).status).toBe(200);
    const listed = await call(server.base, 'GET', '/monitors');
    expect(listed.body.monitors.map((m: { id: string }) => m.id)).toContain(id);
  });

  it('update applies the patch, bumps the version and records the diff with the reason', async () => {
    const { id, ownerToken } = await createMonitor(server.base, { name: 'before', types: ['app.a'] });
    const reply = await call(server.base, 'POST', path(id, '/update'), {
      token: ownerToken,
      body: { reason: 'rename', patch: { name: 'after', horizon: 'hour', types: ['app.a'] } },
    });
    expect(reply.status).toBe(200);
    expect(reply.body.monitor).toMatchObject({ name: 'after', horizon: 'hour', version: 2 });
    // The reply's monitor already counts the configured observation it reports.
    expect(reply.body.monitor.head).toBe(reply.body.seq);
    const configured = await observationAt(server.base, id, ownerToken, reply.body.seq);
    expect(configured.type).toBe(vigilType('configured'));
    expect(configured.data.payload).toMatchObject({
      action: 'update',
      reason: 'rename',
      diff: { name: { before: 'before', after: 'after' }, horizon: { before: 'event', after: 'hour' } },
    });
    // Unchanged fields are not part of the diff.
    expect(configured.data.payload.diff).not.toHaveProperty('types');
  });

  it('update checks the vocabulary of the patch and changes nothing when refused', async () => {
    const { id, ownerToken } = await createMonitor(server.base, {});
    const reply = await call(server.base, 'POST', path(id, '/update'), {
      token: ownerToken,
      body: { reason: 'bad', patch: { horizon: 'century', visibility: 'open' } },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('UNKNOWN_VOCABULARY');
    expect(reply.body.invalid).toHaveLength(2);
    expect(reply.body.invalid.join(' ')).toMatch(/horizon:century/);
    expect(reply.body.invalid.join(' ')).toMatch(/visibility:open/);
    const read = await call(server.base, 'GET', path(id), { token: ownerToken });
    expect(read.body).toMatchObject({ horizon: 'event', visibility: 'private', version: 1 });
  });

  it('configure needs the owner token and a non-empty reason', async () => {
    const { id, ownerToken } = await createMonitor(server.base, { visibility: 'public' });
    const stranger = await call(server.base, 'POST', path(id, '/pause'), { body: { reason: 'x' } });
    expect(stranger.status).toBe(401);
    for (const body of [{}, { reason: '' }, { reason: 7 }]) {
      const reply = await call(server.base, 'POST', path(id, '/pause'), { token: ownerToken, body });
      expect(reply.status).toBe(400);
      expect(reply.body.code).toBe('INVALID');
      expect(reply.body.error).toMatch(/reason/);
      // The refusal itself is recorded on the monitor.
      const entry = await observationAt(server.base, id, ownerToken, reply.body.rejected_seq);
      expect(entry).toMatchObject({ type: vigilType('rejected'), data: { payload: { code: 'INVALID', raw: body } } });
    }
    expect((await call(server.base, 'GET', path(id))).body.status).toBe('active');
  });

  it('pause, pause again (no-op 200), resume, retire; resume of retired is 409 UNAVAILABLE', async () => {
    const { id, ownerToken } = await createMonitor(server.base, {});
    const post = (action: string, reason = `${action} it`) =>
      call(server.base, 'POST', path(id, `/${action}`), { token: ownerToken, body: { reason } });

    const paused = await post('pause');
    expect(paused.status).toBe(200);
    expect(paused.body.monitor).toMatchObject({ status: 'paused', active: false });
    const pausedEntry = await observationAt(server.base, id, ownerToken, paused.body.seq);
    expect(pausedEntry.data.payload).toMatchObject({ action: 'pause', reason: 'pause it' });

    const headBefore = await headOf(server.base, id, ownerToken);
    const again = await post('pause');
    expect(again.status).toBe(200);
    expect(again.body.monitor).toMatchObject({ status: 'paused', version: paused.body.monitor.version });
    expect(await headOf(server.base, id, ownerToken)).toBe(headBefore);

    const resumed = await post('resume');
    expect(resumed.status).toBe(200);
    expect(resumed.body.monitor).toMatchObject({ status: 'active', active: true });

    const retired = await post('retire', 'done for good');
    expect(retired.status).toBe(200);
    expect(retired.body.monitor).toMatchObject({ status: 'retired', active: false });
    const retiredEntry = await observationAt(server.base, id, ownerToken, retired.body.seq);
    expect(retiredEntry.data.payload).toMatchObject({ action: 'retire', reason: 'done for good' });

    const resumeRetired = await post('resume');
    expect(resumeRetired.status).toBe(409);
    expect(resumeRetired.body.code).toBe('UNAVAILABLE');
    expect((await call(server.base, 'GET', path(id), { token: ownerToken })).body.status).toBe('retired');
  });

  it('publish to a paused or retired monitor is 409 UNAVAILABLE and recorded as rejected', async () => {
    const { id, ownerToken } = await createMonitor(server.base, {});
    await call(server.base, 'POST', path(id, '/pause'), { token: ownerToken, body: { reason: 'maintenance' } });
    const refused = await publish(server.base, id, ownerToken, { type: 'app.tick', subject: 's', data: { n: 1 } });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('UNAVAILABLE');
    expect(refused.body.rejected_seq).toBeTypeOf('number');
    const entry = await observationAt(server.base, id, ownerToken, refused.body.rejected_seq);
    expect(entry.type).toBe(vigilType('rejected'));
    expect(entry.data.payload).toMatchObject({ code: 'UNAVAILABLE', raw: { type: 'app.tick', subject: 's', data: { n: 1 } } });
    expect(typeof entry.data.payload.reason).toBe('string');
    // The refused observation itself is nowhere in the feed.
    const feed = await readFeed(server.base, id, ownerToken);
    expect(feed.filter((o) => o.type === 'app.tick')).toHaveLength(0);

    await call(server.base, 'POST', path(id, '/retire'), { token: ownerToken, body: { reason: 'end' } });
    const afterRetire = await publish(server.base, id, ownerToken, { type: 'app.tick' });
    expect(afterRetire.status).toBe(409);
    expect(afterRetire.body.code).toBe('UNAVAILABLE');
    const state = await call(server.base, 'GET', path(id, '/state'), { token: ownerToken });
    expect(state.body.counters.rejected).toBe(2);
    expect(state.body.live).toEqual({ value: false, reason: 'retired' });
  });

  it('the state document has every field, with unknown ages null', async () => {
    const { id, ownerToken } = await createMonitor(server.base, {});
    const reply = await call(server.base, 'GET', path(id, '/state'), { token: ownerToken });
    expect(reply.status).toBe(200);
    const s = reply.body;
    expect(Object.keys(s).sort()).toEqual(
      [
        'monitor',
        'as_of',
        'as_of_seq',
        'head',
        'retention_floor',
        'covers_until',
        'live',
        'counters',
        'last',
        'ages',
        'contradictions_open',
        'confidence',
        'computed_from',
        'ttl_ms',
        'supersedes',
      ].sort(),
    );
    expect(s).toMatchObject({
      monitor: id,
      head: 1,
      as_of_seq: 1,
      retention_floor: 0,
      covers_until: null,
      live: { value: true, reason: null },
      counters: { observations: 0, rejected: 0, delivered: 0, acted: 0, subscriptions_active: 0 },
      ages: { since_last_pull_s: null, since_last_source_contact_s: null },
      contradictions_open: 0,
      confidence: { value: null, computed_by: 'vigil/0.1' },
      supersedes: null,
    });
    expect(s.confidence.inputs.missing.length).toBeGreaterThan(0);
    expect(s.confidence.inputs.present).not.toEqual(expect.arrayContaining(s.confidence.inputs.missing));
  });

  it('state counts, covers_until and last follow publishes, subscriptions and acks', async () => {
    const { id, ownerToken } = await createMonitor(server.base, {});
    const first = await publish(server.base, id, ownerToken, { type: 'app.reading', subject: 'a' });
    await publish(server.base, id, ownerToken, { type: 'app.reading', subject: 'b' });
    const sub = await subscribe(server.base, { monitor: id, subscriber: 'counter' }, ownerToken);
    const page = await call(server.base, 'GET', `/subscriptions/${sub.id}/pull`, { token: sub.token });
    await call(server.base, 'POST', `/subscriptions/${sub.id}/ack`, { token: sub.token, body: { cursor: page.body.next } });
    const s = (await call(server.base, 'GET', path(id, '/state'), { token: ownerToken })).body;
    expect(s.counters.observations).toBe(2);
    expect(s.counters.subscriptions_active).toBe(1);
    expect(s.counters.delivered).toBeGreaterThanOrEqual(2);
    expect(s.covers_until).not.toBeNull();
    expect(Date.parse(s.covers_until)).toBeGreaterThanOrEqual(Date.parse(first.body.observation.time));
    expect(s.last.seq).toBe(s.head);
    expect(s.ages.since_last_pull_s).not.toBeNull();
    expect(s.confidence.gaps).not.toContain('no_subscribers');
  });

  it('contradictions_open closes by subject and by data.resolves', async () => {
    const { id, ownerToken } = await createMonitor(server.base, {});
    const open = (subject: string) => publish(server.base, id, ownerToken, { type: vigilType('contradiction'), subject });
    const resolve = (body: Record<string, unknown>) =>
      publish(server.base, id, ownerToken, { type: vigilType('contradiction_resolved'), ...body });
    const count = async () => (await call(server.base, 'GET', path(id, '/state'), { token: ownerToken })).body.contradictions_open;

    await open('disk');
    const byRef = await open('net');
    await open('cpu');
    expect(await count()).toBe(3);
    await resolve({ subject: 'disk' });
    expect(await count()).toBe(2);
    await resolve({ subject: 'unrelated', data: { resolves: byRef.body.seq } });
    expect(await count()).toBe(1);
    // Resolving a subject with nothing open changes nothing.
    await resolve({ subject: 'disk' });
    expect(await count()).toBe(1);
  });

  it('gaps appear in order and only when true', async () => {
    const { id, ownerToken } = await createMonitor(server.base, { ttl_seconds: 1 });
    const gaps = async () => (await call(server.base, 'GET', path(id, '/state'), { token: ownerToken })).body.confidence.gaps;
    const order = ['independence_unknown', 'no_event_provenance', 'single_actor', 'stale_source', 'no_subscribers', 'unattested_origin'];
    const inOrder = (list: string[]) => expect(list).toEqual(order.filter((g) => list.includes(g)));

    const start = await gaps();
    inOrder(start);
    expect(start).toContain('independence_unknown');
    expect(start).toContain('no_subscribers');
    expect(start).toContain('unattested_origin');
    expect(start).not.toContain('single_actor');

    await publish(server.base, id, ownerToken, { type: 'app.x', actor: 'probe:one', source_ref: 'ref-1' });
    const one = await gaps();
    inOrder(one);
    expect(one).toContain('single_actor');
    expect(one).not.toContain('no_event_provenance');

    await publish(server.base, id, ownerToken, { type: 'app.x', actor: 'probe:two' });
    await subscribe(server.base, { monitor: id, subscriber: 'watcher' }, ownerToken);
    const two = await gaps();
    inOrder(two);
    expect(two).not.toContain('single_actor');
    expect(two).not.toContain('no_subscribers');
    expect(two).toContain('no_event_provenance');
  });
});

describe('monitors on a manual clock', () => {
  const door = useDoor();

  it('stale_source appears once ttl_seconds passes without source contact', async () => {
    const { id, ownerToken } = await createMonitor(door.base, { ttl_seconds: 1 });
    await publish(door.base, id, ownerToken, { type: 'app.x' });
    const gaps = async () => (await call(door.base, 'GET', path(id, '/state'), { token: ownerToken })).body.confidence.gaps;
    expect(await gaps()).not.toContain('stale_source');
    await door.base.clock.advance(1000);
    expect(await gaps()).not.toContain('stale_source');
    await door.base.clock.advance(1);
    expect(await gaps()).toContain('stale_source');
  });
});
