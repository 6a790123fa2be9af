// A node that hands a monitor to the node the rendezvous now names (a node
// joined) lets its source's poll in flight finish and stores what it saw
// before it frees the monitor: the answer the target was giving is not lost.
// Two real nodes on one PostgreSQL database; the node ids are chosen so that
// the second node is the monitor's assignee, and the target holds the first
// poll's answer until the first node says it is handing the monitor over.
import { createHash } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createMonitor, replayAll, subscribe } from '../support/client.ts';
import { postgresFor } from '../support/postgres.ts';
import { scaled } from '../support/time-scale.ts';
import { until } from '../support/until.ts';
import { nodesOnOneDatabase } from './nodes.ts';

const unavailable = await postgresFor('the source handback test');

/** The rendezvous weight a node id has for a monitor key (src/cluster/heartbeat.ts). */
const weight = (id: string, mkey: number) => createHash('sha256').update(`${id}\u0000${mkey}`).digest().readUInt32BE(0);

describe.skipIf(unavailable !== undefined)('a live source handed to another node', () => {
  const cluster = nodesOnOneDatabase();

  it('stores the answer to the poll in flight before the new owner polls', async () => {
    let polls = 0;
    let held: ServerResponse | undefined;
    let heldAborted = false;
    const target = createServer((_req, res) => {
      if (polls++ === 0) {
        held = res;
        res.on('close', () => {
          if (!res.writableEnded) heldAborted = true;
        });
        return;
      }
      res.statusCode = 503;
      res.end('later answers');
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    try {
      const first = await cluster.startOne(['--node-id', 'node-a']);
      const url = `http://127.0.0.1:${(target.address() as AddressInfo).port}/status`;
      // A long interval: the poll's own time limit (the interval, up to 30 s) is not what ends it here.
      const monitor = await createMonitor(first.base, { source: { kind: 'http', url, interval_s: 20 } });
      await until('the first node to poll the target', async () => (held ? true : undefined));

      const db = new pg.Client({ connectionString: cluster.database().url });
      await db.connect();
      const mkey = Number((await db.query<{ key: string }>('select key from monitors where id = $1', [monitor.id]).finally(() => db.end())).rows[0]!.key);
      let second = 'node-b';
      for (let i = 0; weight(second, mkey) <= weight('node-a', mkey); i++) second = `node-b${i}`;
      const secondNode = await cluster.startOne(['--node-id', second]);

      await until('the first node to hand the monitor over (or abort its poll)', async () =>
        heldAborted || new RegExp(`handing monitor\\(s\\) ${mkey}\\b`).test(first.output()) ? true : undefined,
      );
      expect(heldAborted, `the first node aborted its poll in flight when it handed the monitor over; it said:\n${first.output()}`).toBe(false);
      held!.statusCode = 200;
      held!.end('the first answer');
      await until('the second node to poll the target', async () => (polls >= 2 ? true : undefined));

      const reader = await subscribe(secondNode.base, { monitor: monitor.id, subscriber: 'agent:audit' }, monitor.ownerToken);
      const statuses = await until('both answers to be stored', async () => {
        const seen = (await replayAll(secondNode.base, reader)).filter((o) => o.type === 'ai.vigil.source.http').map((o) => o.data.status);
        return seen.length >= 2 ? seen : undefined;
      });
      expect(statuses, `the first node said:\n${first.output()}`).toEqual([200, 503]);
    } finally {
      held?.destroy();
      target.close();
    }
  }, scaled(90_000));
});
