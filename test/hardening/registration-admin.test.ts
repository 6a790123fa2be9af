// Registration and administration (§9, §10, §13): --registration-token,
// --allow-admin with a generated or a given token, compaction, the retention
// floor, and each reset_policy of a subscription left below it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createMonitor, publish, subscribe } from '../support/client.ts';
import { type ServerProcess, startServerProcess, transports } from '../support/server-process.ts';
import { adminTokenOf } from './support.ts';

describe.each(transports)('registration and administration over %s', (transport) => {
  let open: ServerProcess; // --registration-token and --allow-admin (generated token)
  let given: ServerProcess; // --allow-admin=<token>
  let plain: ServerProcess; // neither
  let admin: string;
  beforeAll(async () => {
    [open, given, plain] = await Promise.all([
      startServerProcess({ transport, args: ['--registration-token', 'reg-secret-1', '--allow-admin'] }),
      startServerProcess({ transport, args: ['--allow-admin=given-admin-token'] }),
      startServerProcess({ transport }),
    ]);
    admin = await adminTokenOf(open.output);
  });
  afterAll(() => Promise.all([open?.stop(), given?.stop(), plain?.stop()]));

  it('creating a monitor needs the registration token (bearer or body); such monitors are attested', async () => {
    const without = await call(open.base, 'POST', '/monitors', { body: { id: 'no-token' } });
    expect(without.status).toBe(401);
    expect(without.body).toMatchObject({ code: 'UNAUTHORIZED' });
    expect(typeof without.body.error).toBe('string');
    const wrong = await call(open.base, 'POST', '/monitors', { body: { id: 'wrong-token' }, token: 'reg-secret-2' });
    expect(wrong.status).toBe(401);
    const wrongInBody = await call(open.base, 'POST', '/monitors', { body: { id: 'wrong-body', registration_token: 'nope' } });
    expect(wrongInBody.status).toBe(401);

    const bearer = await call(open.base, 'POST', '/monitors', { body: { id: 'by-bearer' }, token: 'reg-secret-1' });
    expect(bearer.status).toBe(201);
    expect(bearer.body.monitor.attested).toBe(true);
    const inBody = await call(open.base, 'POST', '/monitors', { body: { id: 'by-body', registration_token: 'reg-secret-1' } });
    expect(inBody.status).toBe(201);
    expect(inBody.body.monitor.attested).toBe(true);
    // The registration token is not stored or echoed.
    expect(JSON.stringify(inBody.body)).not.toContain('reg-secret-1');

    const listed = await call(open.base, 'GET', '/admin/snapshot', { token: admin });
    expect(listed.body.monitors).toBe(2);

    const unattested = await createMonitor(plain.base, { id: 'plain' });
    expect(unattested.reply.body.monitor.attested).toBe(false);
  });

  it('--allow-admin prints a generated token; the admin endpoints need it (401), and are 404 without the flag', async () => {
    expect(admin).toMatch(/^vga_/);
    expect(given.output()).not.toContain('admin token');

    const ok = await call(open.base, 'GET', '/admin/snapshot', { token: admin });
    expect(ok.status).toBe(200);
    expect(ok.body.health.ok).toBe(true);
    for (const token of [undefined, 'vga_wrong', 'given-admin-token']) {
      const refused = await call(open.base, 'GET', '/admin/snapshot', { token });
      expect(refused.status).toBe(401);
      expect(refused.body.code).toBe('UNAUTHORIZED');
      const compact = await call(open.base, 'POST', '/admin/compact', { token, body: { upto_seq: 1 } });
      expect(compact.status).toBe(401);
    }

    expect((await call(given.base, 'GET', '/admin/snapshot', { token: 'given-admin-token' })).status).toBe(200);
    expect((await call(given.base, 'GET', '/admin/snapshot', { token: admin })).status).toBe(401);
    expect((await call(given.base, 'GET', '/admin/snapshot')).status).toBe(401);

    for (const token of [undefined, 'anything']) {
      const snapshot = await call(plain.base, 'GET', '/admin/snapshot', { token });
      expect(snapshot.status).toBe(404);
      expect(snapshot.body.code).toBe('NOT_FOUND');
      const compact = await call(plain.base, 'POST', '/admin/compact', { token, body: { upto_seq: 1 } });
      expect(compact.status).toBe(404);
    }
  });

  it('compaction raises the floor; a replay below it is 410; earliest, latest and none each behave as §9 says', async () => {
    const base = given.base;
    const adminToken = 'given-admin-token';
    const m = await createMonitor(base, { id: 'compacted', capabilities: ['observe', 'act'] });
    const subs: Record<string, { id: string; token: string }> = {};
    for (const policy of ['earliest', 'latest', 'none'] as const) {
      subs[policy] = await subscribe(base, { monitor: m.id, subscriber: `agent:${policy}`, from: 'earliest', reset_policy: policy }, m.ownerToken);
    }
    for (let i = 0; i < 10; i++) expect((await publish(base, m.id, m.ownerToken, { type: 'app.tick', data: { i } })).status).toBe(201);
    const head = (await call(base, 'GET', `/monitors/${m.id}`, { token: m.ownerToken })).body.head as number;
    expect(head).toBeGreaterThan(10);

    const compacted = await call(base, 'POST', '/admin/compact', { token: adminToken, body: { monitor: m.id, upto_seq: 6 } });
    expect(compacted.status).toBe(200);
    expect(compacted.body).toEqual({ compacted: 6, retention_floor: 7 });
    expect((await call(base, 'GET', `/monitors/${m.id}`, { token: m.ownerToken })).body.retention_floor).toBe(7);
    // Compacting again below the floor changes nothing.
    const again = await call(base, 'POST', '/admin/compact', { token: adminToken, body: { monitor: m.id, upto_seq: 3 } });
    expect(again.body).toEqual({ compacted: 0, retention_floor: 7 });

    const replay = await call(base, 'GET', `/subscriptions/${subs.earliest!.id}/pull?cursor=3`, { token: subs.earliest!.token });
    expect(replay.status).toBe(410);
    expect(replay.body).toMatchObject({ code: 'CURSOR_EXPIRED', retention_floor: 7 });
    expect(typeof replay.body.error).toBe('string');
    const atFloor = await call(base, 'GET', `/subscriptions/${subs.earliest!.id}/pull?cursor=7&limit=1`, { token: subs.earliest!.token });
    expect(atFloor.status).toBe(200);
    expect(atFloor.body.observations[0].id).toBe('7');

    const earliest = await call(base, 'GET', `/subscriptions/${subs.earliest!.id}/pull?limit=1000`, { token: subs.earliest!.token });
    expect(earliest.status).toBe(200);
    expect(earliest.body.cursor).toBe(7);
    expect(earliest.body.observations[0].id).toBe('7');
    expect(earliest.body.retention_floor).toBe(7);

    const latest = await call(base, 'GET', `/subscriptions/${subs.latest!.id}/pull?limit=1000`, { token: subs.latest!.token });
    expect(latest.status).toBe(200);
    expect(latest.body.cursor).toBe(latest.body.head + 1);
    expect(latest.body.observations).toEqual([]);

    const none = await call(base, 'GET', `/subscriptions/${subs.none!.id}/pull`, { token: subs.none!.token });
    expect(none.status).toBe(410);
    expect(none.body).toMatchObject({ code: 'CURSOR_EXPIRED', retention_floor: 7 });
    // The refusal did not move the cursor: it stays expired until the client seeks.
    const stillNone = await call(base, 'GET', `/subscriptions/${subs.none!.id}/pull`, { token: subs.none!.token });
    expect(stillNone.status).toBe(410);

    // Compacting every monitor answers a floor per monitor.
    const all = await call(base, 'POST', '/admin/compact', { token: adminToken, body: { upto_seq: 8 } });
    expect(all.status).toBe(200);
    expect(all.body.retention_floor[m.id]).toBe(9);
  });
});
