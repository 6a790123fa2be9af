// A live source's observation survives losing a race with another node's
// write: three real nodes on one PostgreSQL database, an http source whose
// target changes status at every poll, and publishers on every node writing
// to the same monitor all along. Every change the source saw is in the feed.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createMonitor, publish, replayAll, subscribe } from '../support/client.ts';
import { postgresFor } from '../support/postgres.ts';
import { nodesOnOneDatabase, untilNodesSeeEachOther } from './nodes.ts';
import type { ServerProcess } from '../support/server-process.ts';
import { scaled } from '../support/time-scale.ts';

const unavailable = await postgresFor('the cluster source tests');

// Odd, so that the last change is a 200 and the answers after it change nothing. Each change is one write
// of the source racing the publishers of the two other nodes on the monitor's row, and every one is checked:
// five such races are the case nine were, in five seconds of load instead of nine.
const changes = 5;
/** Status of the target's i-th answer: alternates for `changes` answers, then stays put. */
const statusOf = (i: number) => (i < changes ? (i % 2 === 0 ? 200 : 503) : 200);

describe.skipIf(unavailable !== undefined)('a live source on a cluster under concurrent writes', () => {
  const cluster = nodesOnOneDatabase();

  it('writes every change the source saw while other nodes publish to the same monitor', async () => {
    let answers = 0;
    let polledPastChanges = () => {};
    const pastChanges = new Promise<void>((done) => (polledPastChanges = done));
    const target = createServer((_req, res) => {
      res.statusCode = statusOf(answers++);
      res.end('same body');
      if (answers > changes) polledPastChanges();
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    try {
      const nodes = await cluster.start(3);
      await untilNodesSeeEachOther(nodes);
      const url = `http://127.0.0.1:${(target.address() as AddressInfo).port}/status`;
      const monitor = await createMonitor(nodes[0]!.base, { source: { kind: 'http', url, interval_s: 1 } });
      let stop = false;
      let published = 0;
      const publisher = async (node: ServerProcess, k: number) => {
        for (let i = 0; !stop; i++) {
          const reply = await publish(node.base, monitor.id, monitor.ownerToken, { type: 'test.load', subject: `p${k}-${i}` });
          if (reply.status === 201) published++;
        }
      };
      const load = nodes.flatMap((n, k) => [publisher(n, k * 2), publisher(n, k * 2 + 1)]);
      // The target answers `changes` different statuses, one per poll, while every node publishes.
      let limit: NodeJS.Timeout | undefined;
      await Promise.race([pastChanges, new Promise((r) => (limit = setTimeout(r, 40_000)))]);
      clearTimeout(limit);
      stop = true;
      await Promise.all(load);
      expect(answers, 'the source polled past every change').toBeGreaterThan(changes);
      expect(published).toBeGreaterThan(0);

      const reader = await subscribe(nodes[1]!.base, { monitor: monitor.id, subscriber: 'agent:audit' }, monitor.ownerToken);
      const expected = Array.from({ length: changes }, (_, i) => statusOf(i));
      let sourced: any[] = [];
      // The last change may still be on its way to the database.
      for (let i = 0; i < 50; i++) {
        sourced = (await replayAll(nodes[2]!.base, reader)).filter((o) => o.type === 'ai.vigil.source.http');
        if (sourced.length >= changes) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      // Writes that lost every race for a while are kept and tried again; none may be dropped.
      const logged = nodes.flatMap((n, i) => n.output().split('\n').filter((line) => /not stored|dropped|lapsed|stopped the timers/.test(line)).map((line) => `node ${i}: ${line}`));
      expect(
        sourced.map((o) => o.data.status),
        `one observation per change the source saw, none missing, none twice; the nodes logged:\n${logged.join('\n')}`,
      ).toEqual(expected);
      expect(logged.filter((line) => line.includes('dropped'))).toEqual([]);
    } finally {
      target.close();
    }
  }, scaled(90_000));
});
