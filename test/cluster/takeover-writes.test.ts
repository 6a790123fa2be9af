// A node taking over a monitor's timers while requests on it are queued for
// the next commit: each client claims and releases its own subject, so every
// claim must answer 201 and every release 200. A takeover that dropped the
// actors under a queued write stored the state from before that write: the
// next claim answered "idempotent" and the next release LEASE_LOST. Takeovers
// are forced by ending the node's lock session, again and again, while other
// requests keep the commit queue full.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { call, createMonitor, publish, subscribe } from '../support/client.ts';
import { postgresUnavailable } from '../support/postgres.ts';
import { scaled } from '../support/time-scale.ts';
import { nodesOnOneDatabase } from './nodes.ts';

const unavailable = await postgresUnavailable();
if (unavailable) console.warn(`skipping the cluster tests: ${unavailable}`);

interface Answer {
  readonly op: 'claim' | 'release';
  readonly subject: string;
  readonly status: number;
  readonly body: unknown;
}

describe.skipIf(unavailable !== undefined)('a takeover while writes are queued', () => {
  const cluster = nodesOnOneDatabase();

  it('keeps every queued lease change: claims answer 201 and releases 200 through takeover after takeover', { timeout: scaled(150_000) }, async () => {
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
    const running = () => takeovers < 15 || answers.length < 2000;
    try {
      const lockSession = async () =>
        (await admin.query<{ pid: number }>("select pid from pg_stat_activity where application_name like 'vigil-lock:%' and datname = current_database()")).rows[0]?.pid;
      // Ends the lock session once the node has taken its locks again on a new one: each end is a takeover of every monitor.
      const faults = async () => {
        let ended: number | undefined;
        while (running()) {
          const pid = await lockSession();
          if (pid !== undefined && pid !== ended) {
            await admin.query('select pg_terminate_backend($1)', [pid]);
            ended = pid;
            takeovers++;
          }
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      };
      const worker = async (subject: string, client: { id: string; token: string }) => {
        while (running()) {
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
    const wrong = answers.filter((a) => a.status !== (a.op === 'claim' ? 201 : 200));
    expect(wrong.slice(0, 5)).toEqual([]);
  });
});
