// --store-sessions bounds the PostgreSQL sessions a node opens: PostgreSQL's
// max_connections (100 by default) is shared by every node, so an operator
// running many nodes sizes each node's pool. A node with 2 pooled sessions
// answers a burst of publishes and holds no more than 2 + its own 3 sessions,
// counted by PostgreSQL itself.
import { spawnSync } from 'node:child_process';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createMonitor, publish } from '../support/client.ts';
import { adminUrl, postgresFor } from '../support/postgres.ts';
import { repoRoot, vigilArgs } from '../support/server-process.ts';
import { nodesOnOneDatabase } from './nodes.ts';

const unavailable = await postgresFor('the --store-sessions test');

const serve = (args: string[]) => spawnSync(process.execPath, vigilArgs(['serve', '--port', '0', ...args]), { cwd: repoRoot, encoding: 'utf8', timeout: 30_000 });

describe('--store-sessions', () => {
  it('is refused without --store, and outside 1 to 1000, naming the flag', () => {
    const alone = serve(['--store-sessions', '2']);
    expect(alone.status).toBe(2);
    expect(alone.stderr).toContain("--store-sessions sizes a cluster node's PostgreSQL pool: it goes with --store postgres://");
    const zero = serve(['--store', 'postgres://postgres@127.0.0.1:5432/postgres', '--store-sessions', '0']);
    expect(zero.status).toBe(2);
    expect(zero.stderr).toBe('vigil: --store-sessions takes a whole number from 1 to 1000; got "0".\n');
  });
});

describe.skipIf(unavailable !== undefined)('a node with --store-sessions 2', () => {
  const cluster = nodesOnOneDatabase();

  it('answers a burst of publishes with at most 5 sessions on its database', async () => {
    const node = await cluster.startOne(['--store-sessions', '2']);
    const monitor = await createMonitor(node.base, {});
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    try {
      const sessions = async () =>
        Number((await admin.query<{ n: string }>('select count(*) as n from pg_stat_activity where datname = $1', [cluster.database().name])).rows[0]!.n);
      let most = 0;
      const burst = Promise.all(Array.from({ length: 200 }, (_, i) => publish(node.base, monitor.id, monitor.ownerToken, { type: 'test.item', subject: `s${i}` })));
      let done = false;
      void burst.finally(() => {
        done = true;
      });
      while (!done) {
        most = Math.max(most, await sessions());
        await new Promise((r) => setTimeout(r, 20));
      }
      const replies = await burst;
      expect(replies.filter((r) => r.status !== 201).map((r) => r.body)).toEqual([]);
      expect(most, 'sessions on the node database during the burst').toBeLessThanOrEqual(5);
      expect(most).toBeGreaterThan(0);
    } finally {
      await admin.end();
    }
  });
});
