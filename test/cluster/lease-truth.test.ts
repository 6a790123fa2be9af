// One lease holder across three real nodes while publishers keep another
// monitor's row contended through every node (protocol.md §20): every grant,
// including an idempotent re-claim and a renew, is one PostgreSQL recorded,
// and no two clients ever hold a subject at once. Checked from the clients'
// own records and the monitor's lease history, not from what a node says.
import { describe, expect, it } from 'vitest';
import { createMonitor, publish, replayAll, subscribe } from '../support/client.ts';
import { postgresFor } from '../support/postgres.ts';
import { nodesOnOneDatabase } from './nodes.ts';
import { type LeaseRecord, runLeaseClients } from './workload/lease-clients.ts';
import { checkLeases, leaseHistory } from './workload/lease-invariants.ts';
import { type PublishRecord, runPublishers } from './workload/publishers.ts';

const unavailable = await postgresFor('the cluster tests');

describe.skipIf(unavailable !== undefined)('lease grants on three nodes', () => {
  const cluster = nodesOnOneDatabase();

  it('never grants a lease PostgreSQL did not record, nor one subject to two clients, while other monitors are contended', { timeout: 150_000 }, async () => {
    const nodes = await cluster.start(3);
    const bases = nodes.map((n) => n.base);
    const leases = await createMonitor(bases[0]!, { capabilities: ['observe', 'act'] });
    const busy = await createMonitor(bases[1]!, {});
    const subjects = ['job-a', 'job-b'];
    for (const subject of subjects) await publish(bases[0]!, leases.id, leases.ownerToken, { type: 'test.task', subject });
    const clients = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        subscribe(bases[i % 3]!, { monitor: leases.id, subscriber: `agent:w${i}`, capabilities: ['observe', 'act'] }, leases.ownerToken),
      ),
    );
    // Until enough grants were made while the other monitor's row was contended. 20 new grants over two
    // subjects come with about 25 idempotent re-claims, 10 renews and over 100 refusals to the seven other
    // clients, each checked against the history: every kind of grant, and every handover, many times
    // over. (It was 40 grants and 200 publishes: twice the same cases, 20 s of three contended nodes.)
    const records: LeaseRecord[] = [];
    const published: PublishRecord[] = [];
    const running = () => records.filter((r) => r.status === 201).length < 20 || published.filter((p) => p.status === 201).length < 100;
    await Promise.all([
      runLeaseClients({ clients, subjects, bases: () => bases, running, records }),
      runPublishers({ monitor: busy.id, token: busy.ownerToken, publishers: 8, bases: () => bases, running, records: published }),
    ]);
    const reader = await subscribe(bases[2]!, { monitor: leases.id, subscriber: 'agent:auditor' }, leases.ownerToken);
    const all = await replayAll(bases[2]!, reader);
    const verdict = checkLeases(records, leaseHistory(all));
    expect(verdict.violations).toEqual([]);
    expect(records.filter((r) => r.status === 0 || r.status >= 500)).toEqual([]);
    // The run had every kind of grant the comment above counts on: idempotent re-claims, renews, refusals.
    for (const [op, status] of [['claim', 200], ['renew', 200], ['claim', 409]] as const) {
      expect(records.some((r) => r.op === op && r.status === status), `a ${op} answered ${status}`).toBe(true);
    }
  });
});
