// A node is named before anything else (issue 43, point 3): from the moment
// it listens, /discover names it, and it takes monitors' timers only after
// its first heartbeat, under its own id. Before, a node starting on a
// database whose monitors were free took their timers under the id "" (its
// ownership rounds began before it listened) and /discover answered id "".
// Every id written into `monitor_owners` is recorded by a trigger of the
// test's database, and /discover is asked in a loop from the node's spawn on.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { call, createMonitor, publish } from '../support/client.ts';
import { postgresFor } from '../support/postgres.ts';
import { stablePort } from '../support/server-process.ts';
import { scaled } from '../support/time-scale.ts';
import { until } from '../support/until.ts';
import { nodesOnOneDatabase } from './nodes.ts';

const unavailable = await postgresFor('the node start test');

const admin = 'vga_node-start-admin-token-of-the-test';
const monitorCount = 5;

describe.skipIf(unavailable !== undefined)('a node that starts on a database with free monitors', () => {
  const cluster = nodesOnOneDatabase();

  it('answers /discover with its id from the first reply and takes timers under that id only', { timeout: scaled(120_000) }, async () => {
    const first = await cluster.startOne(['--allow-admin', admin]);
    for (let i = 0; i < monitorCount; i++) {
      const monitor = await createMonitor(first.base, { capabilities: ['observe', 'act'] });
      await publish(first.base, monitor.id, monitor.ownerToken, { type: 'test.task', subject: `job-${i}` });
    }
    // A clean stop frees its ownership rows at once: the next node finds every monitor free.
    await first.stop();

    const db = new pg.Client({ connectionString: cluster.database().url });
    await db.connect();
    const discovered: string[] = [];
    let polling = true;
    try {
      await db.query(`create table owner_ids_written (node_id text not null)`);
      await db.query(`create function note_owner_id() returns trigger language plpgsql as $$
        begin insert into owner_ids_written values (new.node_id); return new; end $$`);
      await db.query(`create trigger note_owner_id after insert or update on monitor_owners for each row execute function note_owner_id()`);

      const port = await stablePort();
      // Asked from before the node listens (refused connections) until after it took the monitors.
      const poller = (async () => {
        while (polling) {
          const id = await fetch(`http://127.0.0.1:${port}/mp/v0/discover`, { signal: AbortSignal.timeout(scaled(5_000)) })
            .then(async (r) => ((await r.json()) as { node?: { id?: string } }).node?.id)
            .catch(() => undefined);
          if (id !== undefined) discovered.push(id);
          else await new Promise((r) => setTimeout(r, 5));
        }
      })();
      const node = await cluster.startOne(['--allow-admin', admin], port);
      const id = (await call(node.base, 'GET', '/admin/snapshot', { token: admin })).body.store.node as string;
      expect(id).toMatch(/^node-[0-9a-f]{12}$/);
      await until('the new node to run every monitor’s timers', async () => {
        const snapshot = await call(node.base, 'GET', '/admin/snapshot', { token: admin });
        return snapshot.body.store.timer_monitors === monitorCount ? true : undefined;
      });
      polling = false;
      await poller;

      expect(discovered.length).toBeGreaterThan(0);
      expect(new Set(discovered)).toEqual(new Set([id]));
      const { rows } = await db.query<{ node_id: string }>(`select distinct node_id from owner_ids_written`);
      expect(rows.map((r) => r.node_id)).toEqual([id]);
    } finally {
      polling = false;
      await db.end();
    }
  });
});
