// The replica budget holds for the monitors whose timers a node runs too
// (issue 43, point 2). One node (it runs every monitor's timers), a 1 MB
// budget and a monitor past it with a lease held on it: once the monitor is
// cold the node drops it from its replica (dormant: not in memory, not in
// the file), and still records the lease's expiry when it comes, reading the
// monitor again for it, with nothing else touching it (the expiry is read
// from PostgreSQL). Read again through the node, every observation is there
// in order, and the subject can be claimed again.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { call, createMonitor, replayAll, subscribe } from '../support/client.ts';
import { postgresFor } from '../support/postgres.ts';
import { scaled } from '../support/time-scale.ts';
import { until } from '../support/until.ts';
import { nodesOnOneDatabase } from './nodes.ts';

const unavailable = await postgresFor('the dormant monitor test');

const batches = 8;
const perBatch = 500;

describe.skipIf(unavailable !== undefined)('a monitor whose timers run on a node past its replica budget', () => {
  const cluster = nodesOnOneDatabase();

  it('is dropped when cold, wakes for its lease expiry, and reads right again', { timeout: scaled(180_000) }, async () => {
    const node = await cluster.startOne(['--replica-budget', '1']);
    const m = await createMonitor(node.base, { capabilities: ['observe', 'act'] });
    const padding = 'p'.repeat(300);
    for (let b = 0; b < batches; b++) {
      const observations = Array.from({ length: perBatch }, (_, k) => ({ type: 'app.job', subject: b === 0 && k === 0 ? 'job' : `s${k % 50}`, data: { n: b * perBatch + k, padding } }));
      const reply = await call(node.base, 'POST', `/monitors/${m.id}/observations`, { token: m.ownerToken, body: { observations } });
      expect(reply.status).toBeLessThan(300);
    }
    const worker = await subscribe(node.base, { monitor: m.id, subscriber: 'agent:worker', capabilities: ['act'] }, m.ownerToken);
    const leaseSeconds = 20;
    const claimed = await call(node.base, 'POST', `/subscriptions/${worker.id}/leases/claim`, { token: worker.token, body: { subject: 'job', lease_duration_seconds: leaseSeconds } });
    expect(claimed.status).toBe(201);

    // Nothing touches the monitor from here until its expiry is in PostgreSQL.
    await until('the node to drop the monitor from its replica (dormant)', () => (/dropped 1 cold monitor\(s\) \(1 dormant/.test(node.output()) ? true : undefined), scaled(60_000));
    const db = new pg.Client({ connectionString: cluster.database().url });
    await db.connect();
    try {
      await until(
        'the lease expiry, recorded while the monitor was dormant',
        async () => {
          const { rows } = await db.query(`select state from leases where subject = 'job'`);
          return rows[0]?.state !== undefined && rows[0].state !== 'held' ? rows[0].state : undefined;
        },
        scaled(leaseSeconds * 1000 + 30_000),
      );
    } finally {
      await db.end();
    }

    const reader = await subscribe(node.base, { monitor: m.id, subscriber: 'reader' }, m.ownerToken);
    const feed = await replayAll(node.base, reader);
    expect(feed.map((o) => Number(o.id))).toEqual(feed.map((_, i) => i + 1));
    const jobs = feed.filter((o) => o.type === 'app.job');
    expect(jobs.map((o) => o.data.n)).toEqual([...Array(batches * perBatch).keys()]);
    const leaseActions = feed.filter((o) => o.type === 'ai.vigil.monitor.lease' && o.subject === 'job').map((o) => o.data.payload.action);
    expect(leaseActions).toEqual(['claim', 'expired']);
    const again = await call(node.base, 'POST', `/subscriptions/${worker.id}/leases/claim`, { token: worker.token, body: { subject: 'job' } });
    expect(again.status).toBe(201);
  });
});
