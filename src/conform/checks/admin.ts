// §10 retention and compaction, §13 admin endpoints.
import { check, CheckSkipped } from '../check.ts';
import { accepted, equal, fail, refused } from '../expect.ts';
import { createMonitor, publish, pull, subscribe } from '../fixtures.ts';
import type { Wire } from '../wire-client.ts';

export const adminChecks = [
  check('§13', 'MP-13-admin-token', 'admin endpoints need the admin token (401), or are 404 when disabled', async (ctx) => {
    const anonymous = await ctx.http.get('/admin/snapshot');
    if (!ctx.adminToken) {
      if (anonymous.status === 404 || anonymous.status === 401) return `admin token unknown: saw ${anonymous.status} without a token`;
      fail(`GET /admin/snapshot without a token should be 401 or 404, got ${anonymous.label}`);
    }
    refused(anonymous, 401, 'UNAUTHORIZED', 'snapshot without a token');
    refused(await ctx.http.post('/admin/compact', { upto_seq: 1 }, 'vga_wrong'), 401, 'UNAUTHORIZED', 'compact with a wrong token');
    accepted(await ctx.http.get('/admin/snapshot', { token: ctx.adminToken }), 200, 'snapshot with the admin token');
  }),

  check('§10', 'MP-10-compaction', 'compaction raises the floor; a replay below it is 410 CURSOR_EXPIRED; reset_policy applies', async (ctx) => {
    if (!ctx.adminToken) throw new CheckSkipped('no admin token (use --self or --admin-token)');
    const m = await createMonitor(ctx);
    const early = await subscribe(ctx, m, { reset_policy: 'none', filter: { types: 'conform.event' } });
    const lenient = await subscribe(ctx, m, { reset_policy: 'earliest', filter: { types: 'conform.event' } });
    const last = [];
    for (const subject of ['a', 'b', 'c']) last.push(await publish(ctx, m, { type: 'conform.event', subject }));
    const upto = last[1]!;
    const body = accepted(await ctx.http.post('/admin/compact', { monitor: m.id, upto_seq: upto }, ctx.adminToken), 200, 'compact');
    equal(body.retention_floor, upto + 1, 'retention_floor after compacting');
    const replay = refused(await ctx.http.get(`/subscriptions/${lenient.id}/pull`, { token: lenient.token, query: { cursor: 1 } }), 410, 'CURSOR_EXPIRED', 'replay from cursor 1');
    equal(replay.retention_floor, upto + 1, 'retention_floor in CURSOR_EXPIRED');
    refused(await ctx.http.get(`/subscriptions/${early.id}/pull`, { token: early.token }), 410, 'CURSOR_EXPIRED', 'pull with reset_policy none below the floor');
    const moved = await pull(ctx, lenient);
    equal(moved.observations.map((o: Wire) => o.subject), ['c'], 'subjects after reset_policy earliest');
    equal((await ctx.http.get(`/monitors/${m.id}`, { token: m.token })).body?.retention_floor, upto + 1, 'the monitor\'s retention_floor');
  }),
];
