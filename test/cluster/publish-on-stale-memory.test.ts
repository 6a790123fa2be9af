// A publish on a node whose memory of the monitor is behind the database
// (another node just paused or resumed it) gets the answer the database's
// state gives, as on one node (protocol.md §20): a cluster node may publish
// without reading the monitor's rev first when it has heard of no newer
// commit, and the notification of the other node's change races the publish.
// Each round first ends the nodes' notification sessions (they reconnect
// after half a second), so that node A hears nothing of B's change; then each
// pause on node B is followed at once by a publish on node A, which must be
// refused, and each resume by one that must be stored, after the resume.
// Checked from the client's own records and a replay of the feed.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { call, createMonitor, publish, replayAll, subscribe } from '../support/client.ts';
import { postgresFor } from '../support/postgres.ts';
import { nodesOnOneDatabase } from './nodes.ts';

const unavailable = await postgresFor('the stale-memory publish test');

const rounds = 15;

describe.skipIf(unavailable !== undefined)('a publish on a node that has not yet heard of a change', () => {
  const cluster = nodesOnOneDatabase();

  it('is refused after a pause and stored after a resume made on another node', { timeout: 90_000 }, async () => {
    const [a, b] = await cluster.start(2);
    const admin = new pg.Client({ connectionString: cluster.database().url });
    await admin.connect();
    // The sessions that LISTEN: their last statement was the LISTEN or the listener's liveness check.
    const endListeners = () =>
      admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and (query ilike 'listen %' or query = 'select 1')`);
    try {
    const monitor = await createMonitor(a!.base, {});
    // Node A's memory holds the monitor, current: its next publish may skip the read of the rev.
    const first = await publish(a!.base, monitor.id, monitor.ownerToken, { type: 'test.item', subject: 'warm' });
    expect(first.status).toBe(201);
    const stored: number[] = [first.body.seq];
    const wrong: string[] = [];
    for (let round = 0; round < rounds; round++) {
      await endListeners();
      const paused = await call(b!.base, 'POST', `/monitors/${monitor.id}/pause`, { token: monitor.ownerToken, body: { reason: `round ${round}` } });
      expect(paused.status).toBe(200);
      const refused = await publish(a!.base, monitor.id, monitor.ownerToken, { type: 'test.item', subject: `paused-${round}` });
      if (refused.status !== 409 || refused.body.code !== 'UNAVAILABLE') wrong.push(`round ${round}, paused on B: A answered ${refused.status} ${JSON.stringify(refused.body)}`);
      const resumed = await call(b!.base, 'POST', `/monitors/${monitor.id}/resume`, { token: monitor.ownerToken, body: { reason: `round ${round}` } });
      expect(resumed.status).toBe(200);
      const accepted = await publish(a!.base, monitor.id, monitor.ownerToken, { type: 'test.item', subject: `resumed-${round}` });
      if (accepted.status !== 201) wrong.push(`round ${round}, resumed on B: A answered ${accepted.status} ${JSON.stringify(accepted.body)}`);
      else {
        // The pause and the resume each took a seq on node B: the publish comes after both.
        if (accepted.body.seq <= resumed.body.seq) wrong.push(`round ${round}: stored at seq ${accepted.body.seq}, not after the resume's ${resumed.body.seq}`);
        stored.push(accepted.body.seq);
      }
    }
    expect(wrong).toEqual([]);

    // The feed, read through node B, holds each stored publish once and none of the refused ones.
    const reader = await subscribe(b!.base, { monitor: monitor.id, subscriber: 'agent:auditor', from: 1 }, monitor.ownerToken);
    const feed = await replayAll(b!.base, reader);
    const items = feed.filter((o) => o.type === 'test.item');
    expect(items.map((o) => o.subject)).toEqual(['warm', ...Array.from({ length: rounds }, (_, r) => `resumed-${r}`)]);
    expect(items.map((o) => Number(o.id))).toEqual(stored);
    const seqs = feed.map((o) => Number(o.id));
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, k) => k + 1));
    } finally {
      await admin.end();
    }
  });
});
