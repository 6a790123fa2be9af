// Monitor locks (which node runs a monitor's timers and source) spread over
// the live nodes by rendezvous hashing, instead of all going to the first node
// up; a node that joins takes its share from the others, and a node that dies
// leaves its share to the live ones. Counted from each node's /admin/snapshot.
import { describe, expect, it } from 'vitest';
import { call, createMonitor } from '../support/client.ts';
import { postgresFor } from '../support/postgres.ts';
import type { ServerProcess } from '../support/server-process.ts';
import { nodesOnOneDatabase } from './nodes.ts';
import { untilTrue } from '../support/until.ts';

const unavailable = await postgresFor('the lock spread test');

const admin = 'vga_lock-spread-admin-token-of-the-test';
const monitors = 12;

const timerMonitors = async (node: ServerProcess) =>
  (await call(node.base, 'GET', '/admin/snapshot', { token: admin })).body.store.timer_monitors as number;

describe.skipIf(unavailable !== undefined)('monitor locks on several nodes', () => {
  const cluster = nodesOnOneDatabase();
  const neighbour = nodesOnOneDatabase();

  it("ignore another database's nodes on the same PostgreSQL server", async () => {
    // A node of another cluster (another database of the same server) takes no share of this one's monitors.
    await cluster.startOne(['--allow-admin', admin]);
    const a = await neighbour.startOne(['--allow-admin', admin]);
    for (let i = 0; i < monitors; i++) await createMonitor(a.base, {});
    await untilTrue('the only node of this database to hold every lock', async () => (await timerMonitors(a)) === monitors);
    await a.kill();
  });

  it('spread over the live nodes, and go back to the survivor when a node dies', async () => {
    const a = await cluster.startOne(['--allow-admin', admin]);
    for (let i = 0; i < monitors; i++) await createMonitor(a.base, {});
    await untilTrue('the first node to hold every lock', async () => (await timerMonitors(a)) === monitors);

    const b = await cluster.startOne(['--allow-admin', admin]);
    let counts: number[] = [];
    await untilTrue('both nodes to hold a share of the locks', async () => {
      counts = [await timerMonitors(a), await timerMonitors(b)];
      return counts[0]! > 0 && counts[1]! > 0 && counts[0]! + counts[1]! === monitors;
    });
    expect(counts.reduce((x, y) => x + y)).toBe(monitors);

    await b.kill();
    await untilTrue('the survivor to hold every lock again', async () => (await timerMonitors(a)) === monitors);
  });
});
