// Readers on three real nodes see only what PostgreSQL committed (protocol.md
// §20): while publishers write one monitor through every node, each pull page
// stays at or below the head it reports, `next` is the seq after the last
// observation returned, and a reader that acknowledges `next` after every
// page gets every seq once, with no gap; an event stream on each node the same.
import { describe, expect, it } from 'vitest';
import { call, createMonitor, subscribe } from '../support/client.ts';
import { postgresFor } from '../support/postgres.ts';
import { openSse } from '../support/sse.ts';
import { nodesOnOneDatabase } from './nodes.ts';
import { type PublishRecord, runPublishers } from './workload/publishers.ts';

const unavailable = await postgresFor('the cluster tests');

describe.skipIf(unavailable !== undefined)('reads on three nodes under concurrent writes', () => {
  const cluster = nodesOnOneDatabase();

  it('pulls and streams only committed observations, each once and in order', { timeout: 90_000 }, async () => {
    const nodes = await cluster.start(3);
    const bases = nodes.map((n) => n.base);
    const monitor = await createMonitor(bases[0]!, {});
    const readers = await Promise.all(
      bases.map((base, i) => subscribe(base, { monitor: monitor.id, subscriber: `agent:reader${i}`, from: 'head' }, monitor.ownerToken)),
    );
    const first = Number(readers[2]!.reply.body.subscription.cursor);
    const streams = await Promise.all(
      bases.map(async (base, i) => {
        const sub = await subscribe(base, { monitor: monitor.id, subscriber: `agent:streamer${i}`, from: first }, monitor.ownerToken);
        return openSse(`${base}/subscriptions/${sub.id}/stream`, { authorization: `Bearer ${sub.token}` });
      }),
    );

    const published: PublishRecord[] = [];
    let publishing = true;
    const writes = runPublishers({
      monitor: monitor.id,
      token: monitor.ownerToken,
      publishers: 6,
      bases: () => bases,
      running: () => publishing && published.filter((p) => p.status === 201).length < 100,
      records: published,
    }).then(() => {
      publishing = false;
    });

    const problems: string[] = [];
    const seen = readers.map(() => [] as number[]);
    let finalHead = Number.POSITIVE_INFINITY;
    await Promise.all([
      writes,
      ...readers.map(async (reader, i) => {
        // Each reader pulls through every node in turn and acknowledges `next` after each page.
        for (let turn = 0; ; turn++) {
          const base = bases[(i + turn) % 3]!;
          const page = await call(base, 'GET', `/subscriptions/${reader.id}/pull?limit=7&wait=1`, { token: reader.token });
          if (page.status !== 200) {
            problems.push(`pull on node ${(i + turn) % 3}: ${page.status} ${JSON.stringify(page.body)}`);
            return;
          }
          const seqs = page.body.observations.map((o: { id: string }) => Number(o.id));
          seen[i]!.push(...seqs);
          const last = seqs.at(-1);
          if (last !== undefined && last > page.body.head) problems.push(`page ${seqs.join(',')} past head ${page.body.head}`);
          if (last !== undefined && page.body.next !== last + 1) problems.push(`page ${seqs.join(',')} with next ${page.body.next}`);
          const acked = await call(base, 'POST', `/subscriptions/${reader.id}/ack`, { token: reader.token, body: { cursor: page.body.next } });
          if (acked.status !== 200) problems.push(`ack ${page.body.next}: ${acked.status} ${JSON.stringify(acked.body)}`);
          if (!publishing && page.body.next > finalHead) return;
          if (!publishing && finalHead === Number.POSITIVE_INFINITY) {
            finalHead = (await call(bases[0]!, 'GET', `/monitors/${monitor.id}`, { token: monitor.ownerToken })).body.head;
          }
        }
      }),
    ]);
    expect(problems).toEqual([]);
    const acknowledged = published.filter((p) => p.status === 201).map((p) => p.seq!);
    expect(acknowledged.length).toBeGreaterThanOrEqual(100);
    const from = (start: number) => Array.from({ length: finalHead - start + 1 }, (_, k) => start + k);
    seen.forEach((s, i) => {
      expect(s).toEqual(from(Number(readers[i]!.reply.body.subscription.cursor)));
    });
    const expected = from(first);
    for (const stream of streams) {
      const events = await stream.waitFor(expected.length, 'observation', 60_000);
      expect(events.slice(0, expected.length).map((e) => Number(e.id))).toEqual(expected);
      stream.close();
    }
  });
});
