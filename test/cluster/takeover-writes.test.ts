// A node taking over a monitor's timers while requests on it are queued for
// the next commit: each client publishes a new subject, then claims and
// releases it, so every publish and claim must answer 201 and every release
// 200. A takeover that dropped the actors under a queued write stored the
// state from before that write: the next claim answered "idempotent" and the
// next release LEASE_LOST. A publish run again after its batch was refused
// did not write its subject again: the claim answered 404. Takeovers
// are forced by freeing the node's ownership rows, again and again, while
// other requests keep the commit queue full.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { call, createMonitor, publish, subscribe } from '../support/client.ts';
import { postgresFor } from '../support/postgres.ts';
import { scaled } from '../support/time-scale.ts';
import { nodesOnOneDatabase } from './nodes.ts';

const unavailable = await postgresFor('the cluster tests');

interface Answer {
  readonly op: 'publish' | 'claim' | 'release';
  readonly subject: string;
  readonly status: number;
  readonly body: unknown;
}

describe.skipIf(unavailable !== undefined)('a takeover while writes are queued', () => {
  const cluster = nodesOnOneDatabase();

  it('keeps every queued change: publishes and claims answer 201 and releases 200 through takeover after takeover', { timeout: scaled(150_000) }, async () => {
    const [node] = await cluster.start(1);
    const base = node!.base;
    const leases = await createMonitor(base, { capabilities: ['observe', 'act'] });
    const busy = await createMonitor(base, {});
    const subjects = Array.from({ length: 10 }, (_, i) => `task-${i}`);
    for (const subject of subjects) await publish(base, leases.id, leases.ownerToken, { type: 'test.task', subject });
    const clients = await Promise.all(
      subjects.map((_, i) => subscribe(base, { monitor: leases.id, subscriber: `agent:w${i}`, capabilities: ['observe', 'act'] }, leases.ownerToken)),
    );

    const admin = new pg.Client({ connectionString: cluster.database().url });
    await admin.connect();
    const answers: Answer[] = [];
    let takeovers = 0;
    const running = () => takeovers < 10 || answers.length < 1200;
    try {
      // Frees the node's ownership rows (as if it had not renewed them) once it has taken both monitors
      // again under new tokens: the node gives them up and takes them over, each time a takeover of both.
      const faults = async () => {
        let freed: number | undefined;
        while (running()) {
          const { rows } = await admin.query<{ token: string; expires_ms: string }>('select token, expires_ms from monitor_owners');
          const tokens = rows.reduce((sum, r) => sum + Number(r.token), 0);
          if (rows.length === 2 && rows.every((r) => Number(r.expires_ms) > 0) && tokens !== freed) {
            await admin.query('update monitor_owners set expires_ms = 0');
            freed = tokens;
            takeovers++;
          }
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      };
      const worker = async (prefix: string, client: { id: string; token: string }) => {
        for (let round = 1; running(); round++) {
          const subject = `${prefix}-${round}`;
          const published = await publish(base, leases.id, leases.ownerToken, { type: 'test.task', subject });
          answers.push({ op: 'publish', subject, status: published.status, body: published.body });
          for (const op of ['claim', 'release'] as const) {
            const reply = await call(base, 'POST', `/subscriptions/${client.id}/leases/${op}`, { body: { subject }, token: client.token });
            answers.push({ op, subject, status: reply.status, body: reply.body });
          }
        }
      };
      const publisher = async () => {
        while (running()) await publish(base, busy.id, busy.ownerToken, { type: 'test.note' });
      };
      await Promise.all([faults(), ...subjects.map((s, i) => worker(s, clients[i]!)), ...Array.from({ length: 8 }, publisher)]);
    } finally {
      await admin.end();
    }
    const wrong = answers.filter((a) => a.status !== (a.op === 'release' ? 200 : 201));
    expect(wrong.slice(0, 5)).toEqual([]);
  });
});
