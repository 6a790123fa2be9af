// /ui/events over real sockets: viewers who may see the same thing share one
// view (the same frames, built once for all), each class sees only what its
// token opens, and viewers without a token are capped (429 past the cap)
// apart from those with one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server.ts';
import { call, publish } from '../support/client.ts';
import { openSse, type SseConnection } from '../support/sse.ts';

const admin = 'vga_dashboard_sharing_token_0123456789';
const cap = 12;

interface View {
  monitors: Array<{ id: string; head: number }>;
}

describe('dashboard viewers share views', () => {
  let server: RunningServer;
  let base: string;
  const open: SseConnection[] = [];

  beforeAll(async () => {
    server = await startServer({ port: 0, transport: 'node', cloud: false, allowAdmin: admin, dashboardViewers: { anonymous: cap }, log: () => undefined });
    base = `${server.url}/mp/v0`;
  });
  afterAll(async () => {
    for (const c of open) c.close();
    await server?.close();
  });

  const viewer = async (headers: Record<string, string> = {}) => {
    const c = await openSse(`${server.url}/ui/events`, headers);
    if (c.status === 200) open.push(c);
    return c;
  };
  const viewsOf = (c: SseConnection) => c.events.filter((e) => e.event === 'view');
  /** Waits until the viewer's latest view shows `monitor` at `head` or beyond. */
  const sees = async (c: SseConnection, monitor: string, head: number) => {
    for (let n = 1; ; n++) {
      const views = await c.waitFor(n, 'view', 20_000);
      const row = (JSON.parse(views.at(-1)!.data) as View).monitors.find((m) => m.id === monitor);
      if (row && row.head >= head) return views.at(-1)!;
      n = views.length;
    }
  };

  it('one view per class, the same frames for all of its viewers; 429 past the anonymous cap', { timeout: 120_000 }, async () => {
    const shown = await call(base, 'POST', '/monitors', { body: { id: 'shown', visibility: 'public' } });
    const hidden = await call(base, 'POST', '/monitors', { body: { id: 'hidden', visibility: 'private' } });
    expect([shown.status, hidden.status]).toEqual([201, 201]);

    const anonymous: SseConnection[] = [];
    for (let i = 0; i < cap; i++) {
      // A token that opens no monitor is anonymous too.
      const c = await viewer(i % 3 === 0 ? { authorization: 'Bearer not-a-token-of-this-server' } : {});
      expect(c.status).toBe(200);
      anonymous.push(c);
    }
    const over = await viewer();
    expect(over.status).toBe(429);
    expect(over.errorBody).toMatchObject({ code: 'OVER_BUDGET' });
    expect(over.errorBody.error).toContain(`At most ${cap} dashboards without a token`);
    expect(over.errorBody.error).toContain('--max-anonymous-viewers');
    expect((await viewer({ authorization: 'Bearer still-not-a-token' })).status).toBe(429);
    // Viewers with a token are not held back by anonymous ones.
    const owner = await viewer({ authorization: `Bearer ${hidden.body.owner_token}` });
    const root = await viewer({ authorization: `Bearer ${admin}` });
    expect([owner.status, root.status]).toEqual([200, 200]);

    const stats = server.dashboard.views.stats();
    expect(stats.viewers).toEqual({ anonymous: cap, withToken: 2 });
    expect(Object.keys(stats.views).sort()).toEqual(['admin', 'anonymous', expect.stringMatching(/^token:/)]);
    expect(stats.views.anonymous!.viewers).toBe(cap);

    await publish(base, 'shown', shown.body.owner_token, { type: 'deploy', data: { n: 1 } });
    const frames = await Promise.all(anonymous.map((c) => sees(c, 'shown', 1)));
    // Built once and sent to all: every anonymous viewer got the very same frame.
    expect(new Set(frames.map((f) => f.id)).size).toBe(1);
    expect(new Set(frames.map((f) => f.data)).size).toBe(1);
    expect(frames[0]!.id).toMatch(/^\d+$/);
    for (const c of anonymous) {
      for (const v of viewsOf(c)) expect((JSON.parse(v.data) as View).monitors.map((m) => m.id)).not.toContain('hidden');
    }
    const ownerView = JSON.parse((await sees(owner, 'shown', 1)).data) as View;
    expect(ownerView.monitors.map((m) => m.id).sort()).toEqual(['hidden', 'shown']);
    const rootView = JSON.parse((await sees(root, 'shown', 1)).data) as View & { admin: boolean };
    expect(rootView.admin).toBe(true);

    // Leaving frees a place; when the last viewer of a class leaves, its view is gone.
    anonymous[0]!.close();
    await anonymous[0]!.closed;
    let again: SseConnection | undefined;
    for (let tries = 0; tries < 200 && again?.status !== 200; tries++) {
      again = await viewer();
      if (again.status !== 200) await new Promise((d) => setImmediate(d));
    }
    expect(again!.status).toBe(200);
    // A viewer joining an open view gets its latest frame at once, not a build of its own.
    const before = server.dashboard.views.stats().views.anonymous!.builds;
    const [first] = await again!.waitFor(1, 'view');
    expect(Number(first!.id)).toBeLessThanOrEqual(before);
    for (const c of [...anonymous, again!, owner, root]) c.close();
    await Promise.all([...anonymous, again!, owner, root].map((c) => c.closed));
    for (let tries = 0; tries < 1000 && Object.keys(server.dashboard.views.stats().views).length > 0; tries++) {
      await new Promise((d) => setTimeout(d, 10));
    }
    expect(server.dashboard.views.stats()).toEqual({ viewers: { anonymous: 0, withToken: 0 }, views: {} });
  });
});
