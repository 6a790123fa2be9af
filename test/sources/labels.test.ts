// §18: a source without its kind's run field is a label, as in the base
// protocol: accepted from anyone who may create the monitor, stored and
// returned as given, never run, whatever flags the server has. Live sources
// keep every rule; the dashboard's view says which sources are live.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSse } from '../support/sse.ts';
import { call, type SourceServer, sourceServer } from './helpers.ts';

const admin = 'vga_labels_test_admin_token_0123456789';
let vigil: SourceServer;
// The server runs no kind at all and has no shell flag: nothing here may run.
beforeAll(async () => {
  vigil = await sourceServer({ kinds: [], allowAdmin: admin });
});
afterAll(() => vigil.close());

const kinds = ['shell', 'http', 'file', 'log', 'ws', 'feed', 'cir', 'formula'];

describe('a source without its run field is a label', () => {
  it('is accepted for every kind without a token, stored and returned as given, and never run', async () => {
    for (const kind of kinds) {
      const source = { kind, ref: 'conformance' };
      const created = await call(vigil.base, 'POST', '/monitors', { body: { source } });
      expect(created.status, `${kind}: ${JSON.stringify(created.body)}`).toBe(201);
      expect(created.body.monitor.source).toEqual(source);
      const id = created.body.monitor.id;
      const read = await call(vigil.base, 'GET', `/monitors/${id}`, { token: created.body.owner_token });
      expect(read.body.source).toEqual(source);
      expect(vigil.server.service.system.sources.isResident(id)).toBe(false);
      // A bare kind is a label too.
      const bare = await call(vigil.base, 'POST', '/monitors', { body: { source: { kind } } });
      expect(bare.status, kind).toBe(201);
      expect(bare.body.monitor.source).toEqual({ kind });
    }
  });

  it("keeps the kind's other fields as given (no defaults filled in) and refuses unknown or ill-shaped ones, naming the field", async () => {
    const created = await call(vigil.base, 'POST', '/monitors', { body: { source: { kind: 'shell', ref: 'nightly-build', interval_s: 5 } } });
    expect(created.status).toBe(201);
    expect(created.body.monitor.source).toEqual({ kind: 'shell', ref: 'nightly-build', interval_s: 5 });
    const unknown = await call(vigil.base, 'POST', '/monitors', { body: { source: { kind: 'http', ref: 'x', colour: 'red' } } });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ code: 'INVALID', field: 'source.colour' });
    expect(unknown.body.error).toContain('ref');
    const longRef = await call(vigil.base, 'POST', '/monitors', { body: { source: { kind: 'feed', ref: 'r'.repeat(257) } } });
    expect(longRef.body).toMatchObject({ code: 'INVALID', field: 'source.ref' });
    const badInterval = await call(vigil.base, 'POST', '/monitors', { body: { source: { kind: 'http', interval_s: 0 } } });
    expect(badInterval.body).toMatchObject({ code: 'INVALID', field: 'source.interval_s' });
  });

  it('can replace a label on update, and a label replacing a live source is not run', async () => {
    const { body } = await call(vigil.base, 'POST', '/monitors', { body: { source: { kind: 'log' } } });
    const token = body.owner_token;
    const id = body.monitor.id;
    const patched = await call(vigil.base, 'POST', `/monitors/${id}/update`, { token, body: { reason: 'label it', patch: { source: { kind: 'shell', ref: 'deploys' } } } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.monitor.source).toEqual({ kind: 'shell', ref: 'deploys' });
    expect(vigil.server.service.system.sources.isResident(id)).toBe(false);
  });
});

describe('a live source keeps every rule', () => {
  it('is refused when the server does not run its kind, and a shell source needs the flag and the admin token', async () => {
    const shell = await call(vigil.base, 'POST', '/monitors', { body: { source: { kind: 'shell', ref: 'x', command: 'true' } }, token: admin });
    expect(shell.status).toBe(400);
    expect(shell.body).toMatchObject({ code: 'INVALID', field: 'source.kind' });
    expect(shell.body.error).toContain('--allow-shell-sources');
    const http = await call(vigil.base, 'POST', '/monitors', { body: { source: { kind: 'http', url: 'https://example.test/' } } });
    expect(http.body).toMatchObject({ code: 'INVALID', field: 'source.kind' });
    expect(http.body.error).toContain('--sources');
  });

  it('takes a ref, and the dashboard marks it live and the labels not', async () => {
    const live = await sourceServer({ kinds: ['http'] });
    try {
      const target = `${live.server.url}/mp/v0/discover`;
      const created = await call(live.base, 'POST', '/monitors', { body: { id: 'watched', source: { kind: 'http', ref: 'discover', url: target, interval_s: 60 } } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body.monitor.source).toMatchObject({ kind: 'http', ref: 'discover', url: target, method: 'GET' });
      expect(live.server.service.system.sources.isResident('watched')).toBe(true);
      await call(live.base, 'POST', '/monitors', { body: { id: 'labelled', visibility: 'public', source: { kind: 'http', ref: 'elsewhere' } } });
      await call(live.base, 'POST', '/monitors', { body: { id: 'open', visibility: 'public', source: { kind: 'http', url: target } } });
      const stream = await openSse(`${live.server.url}/ui/events`);
      try {
        const [first] = await stream.waitFor(1, 'view');
        const monitors = JSON.parse(first!.data).monitors as Array<{ id: string; source_live: boolean; source_ref: string | null }>;
        const byId = new Map(monitors.map((m) => [m.id, m]));
        expect(byId.get('labelled')).toMatchObject({ source_live: false, source_ref: 'elsewhere' });
        expect(byId.get('open')).toMatchObject({ source_live: true, source_ref: null });
      } finally {
        stream.close();
      }
      const page = await (await fetch(`${live.server.url}/ui/app.js`)).text();
      expect(page).toContain('source_live');
    } finally {
      await live.close();
    }
  });
});
