// Issue 42 points 5 and 6: dashboard viewers cannot take the server or each
// other down. 50 anonymous viewers, each with its own ?obs_subject=, each had
// a view of its own that queried the store per monitor on every rebuild
// (publish and /discover went from 1–2 ms to ~0.9 s); now every filter picks
// its rows from one shared cache, the store is read once per rebuild however
// many filters are open, and distinct filters are capped per class and per
// client. The caps on viewers were global (one token's 64 streams locked the
// admin out; one client's 1,000 locked everyone out); now one client and one
// token are capped below them, and the admin has places of its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server.ts';
import { call, publish } from '../support/client.ts';
import { openSse, type SseConnection } from '../support/sse.ts';

const admin = 'vga_dashboard_limits_token_0123456789';

interface View {
  observations: Array<{ subject: string | null; type: string }>;
}

function dashboard(caps: Record<string, number>) {
  const ref = { server: undefined as unknown as RunningServer, base: '', open: [] as SseConnection[] };
  beforeAll(async () => {
    ref.server = await startServer({ port: 0, transport: 'node', cloud: false, allowAdmin: admin, dashboardViewers: caps, log: () => undefined });
    ref.base = `${ref.server.url}/mp/v0`;
  });
  afterAll(async () => {
    for (const c of ref.open) c.close();
    await ref.server?.close();
  });
  return {
    ref,
    /** Opens /ui/events from `from` (127.0.0.1 by default; 127.0.1.1 is another client). */
    async viewer(query = '', token?: string, from?: string) {
      const c = await openSse(`${ref.server.url}/ui/events${query ? `?${query}` : ''}`, token ? { authorization: `Bearer ${token}` } : {}, from);
      if (c.status === 200) ref.open.push(c);
      return c;
    },
  };
}

const latest = (c: SseConnection) => JSON.parse(c.events.filter((e) => e.event === 'view').at(-1)!.data) as View;

describe('filtered dashboards share one cache of recent rows', () => {
  const { ref, viewer } = dashboard({ perClient: 100, filteredPerClient: 100, filteredPerClass: 100 });

  it('20 viewers with a filter each see their own rows, and the store is read once per rebuild, not per filter', { timeout: 120_000 }, async () => {
    const made = await call(ref.base, 'POST', '/monitors', { body: { id: 'shown', visibility: 'public' } });
    const owner = made.body.owner_token as string;
    for (let i = 0; i < 40; i++) await publish(ref.base, 'shown', owner, { type: 'ci.build', subject: `s${i % 20}`, data: { i } });
    const viewers: SseConnection[] = [];
    for (let i = 0; i < 20; i++) {
      const c = await viewer(`obs_subject=s${i}`);
      expect(c.status).toBe(200);
      viewers.push(c);
    }
    await Promise.all(viewers.map((c) => c.waitFor(1, 'view', 20_000)));
    const store = ref.server.service.store;
    const read = store.readFeed.bind(store);
    let reads = 0;
    store.readFeed = (...args: Parameters<typeof store.readFeed>) => {
      reads++;
      return read(...args);
    };
    try {
      // Each publish waits for every viewer's frame showing it: one rebuild at least per publish.
      for (let round = 0; round < 5; round++) {
        const subject = `s${round}`;
        await publish(ref.base, 'shown', owner, { type: 'ci.build', subject, data: { round } });
        const target = viewers[round]!;
        for (let n = target.events.filter((e) => e.event === 'view').length + 1; ; n++) {
          await target.waitFor(n, 'view', 20_000);
          if (latest(target).observations.some((o) => (o as unknown as { data: { round?: number } }).data.round === round)) break;
        }
      }
    } finally {
      store.readFeed = read;
    }
    // One catch-up read per rebuild of the view (old: every filter read the monitor, once or twice, on every rebuild: 100 and more).
    const builds = ref.server.dashboard.views.stats().views.anonymous?.builds;
    expect(reads, `${reads} reads of the store over 5 publishes (${builds} builds so far)`).toBeLessThanOrEqual(10);
    for (const [i, c] of viewers.entries()) {
      const rows = latest(c).observations;
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.every((o) => o.subject === `s${i}`)).toBe(true);
    }
    expect(ref.server.dashboard.views.stats().views.anonymous).toMatchObject({ viewers: 20, filters: 20 });
  });
});

describe('distinct filters are capped per client and per class', () => {
  const { viewer } = dashboard({ filteredPerClient: 3, filteredPerClass: 4 });

  it('refuses a fourth distinct filter of one client and a fifth of the class, never a filter already open', { timeout: 60_000 }, async () => {
    for (const subject of ['a', 'b', 'c']) expect((await viewer(`obs_subject=${subject}`)).status).toBe(200);
    const fourth = await viewer('obs_subject=d');
    expect(fourth.status).toBe(429);
    expect(fourth.errorBody).toEqual({
      code: 'OVER_BUDGET',
      error:
        'This client (127.0.0.0/24) already has 3 differently filtered or charted dashboards open, the most one client may have (serve --viewer-limits filtered_per_client); close one, or use a filter already open.',
    });
    // The same filter again, or none, is no new view.
    expect((await viewer('obs_subject=a')).status).toBe(200);
    expect((await viewer()).status).toBe(200);
    // Another client opens the class's fourth; its fifth is refused for the class, though the client has room.
    expect((await viewer('obs_type=deploy', undefined, '127.0.1.1')).status).toBe(200);
    const fifth = await viewer('obs_actor=agent:x', undefined, '127.0.1.1');
    expect(fifth.status).toBe(429);
    expect(fifth.errorBody.error).toBe(
      '4 differently filtered or charted dashboards are already open for viewers like this one, the most allowed (serve --viewer-limits filtered_per_class); use a filter already open, or none.',
    );
    expect((await viewer('obs_subject=b', undefined, '127.0.1.1')).status).toBe(200);
  });
});

describe('viewer caps per client and per token, with places kept for the admin', () => {
  const { ref, viewer } = dashboard({ withToken: 6, admin: 2, perClient: 4, perToken: 3 });

  it('one client or one token cannot lock others out, nor anyone the admin', { timeout: 60_000 }, async () => {
    const made = await call(ref.base, 'POST', '/monitors', { body: { id: 'private-one', visibility: 'private' } });
    const other = await call(ref.base, 'POST', '/monitors', { body: { id: 'private-two', visibility: 'private' } });
    const [tokenOne, tokenTwo] = [made.body.owner_token as string, other.body.owner_token as string];
    const third = await call(ref.base, 'POST', '/monitors', { body: { id: 'private-three', visibility: 'private' } });

    for (let i = 0; i < 4; i++) expect((await viewer()).status).toBe(200);
    const fifth = await viewer();
    expect(fifth.status).toBe(429);
    expect(fifth.errorBody.error).toBe(
      'This client (127.0.0.0/24) already has 4 dashboards open, the most one client may have (serve --viewer-limits per_client); close one first.',
    );
    expect((await viewer(undefined, undefined, '127.0.1.1')).status).toBe(200);

    for (let i = 0; i < 3; i++) expect((await viewer(undefined, tokenOne, '127.0.2.1')).status).toBe(200);
    const fourthOfToken = await viewer(undefined, tokenOne, '127.0.3.1');
    expect(fourthOfToken.status).toBe(429);
    expect(fourthOfToken.errorBody.error).toBe('This token already has 3 dashboards open, the most one token may have (serve --viewer-limits per_token); close one first.');
    for (let i = 0; i < 3; i++) expect((await viewer(undefined, tokenTwo, '127.0.4.1')).status).toBe(200);
    const overall = await viewer(undefined, third.body.owner_token, '127.0.5.1');
    expect(overall.status).toBe(429);
    expect(overall.errorBody.error).toBe('At most 6 dashboards with a token may be open at once; try again later.');

    // Every token place is taken, and the first client is at its cap: the admin still gets its own.
    const root = [await viewer(undefined, admin), await viewer(undefined, admin)];
    expect(root.map((c) => c.status)).toEqual([200, 200]);
    expect((await viewer(undefined, admin)).errorBody.error).toBe('At most 2 dashboards with the admin token may be open at once; try again later.');
    expect(ref.server.dashboard.views.stats().viewers).toEqual({ anonymous: 5, withToken: 8 });
  });
});
