// `vigil bench` against three real nodes on one PostgreSQL database, its
// clients spread over the nodes as over a cluster: no two holders at once and
// crashed holders' leases reclaimed (expiry runs on one node, the next grant
// may come from any), and every event to every stream once when the streams
// and the publisher sit on different nodes. A few seconds of load each.
import { describe, expect, it } from 'vitest';
import { runBench, said } from '../bench/run-bench.ts';
import { postgresFor } from '../support/postgres.ts';
import { nodesOnOneDatabase, untilNodesSeeEachOther } from './nodes.ts';

const unavailable = await postgresFor('the cluster bench tests');

describe.skipIf(unavailable !== undefined)('vigil bench against three PostgreSQL nodes', () => {
  const cluster = nodesOnOneDatabase();

  it('leases: no violation, crashed holders reclaimed across nodes', { timeout: 180_000 }, async () => {
    const nodes = await cluster.start(3);
    await untilNodesSeeEachOther(nodes);
    const bases = nodes.flatMap((n) => ['--base', n.url]);
    // Three seconds are three times the 1 s lease: crashed holders' leases expire and are granted again
    // within them, also when four cluster files load the machine and the first crash comes late (with
    // two, one run in five of the cluster folder counted crashes and no reclaim).
    const run = await runBench(['leases', ...bases, '--clients', '12', '--subjects', '6', '--hold', '5ms-30ms', '--lease-seconds', '1', '--crash', '0.1', '--duration', '3s', '--json']);
    expect(run.code, said(run)).toBe(0);
    const f = run.figures;
    expect(f.servers.map((s: { node: string }) => s.node).every(Boolean)).toBe(true);
    expect(new Set(f.servers.map((s: { node: string }) => s.node)).size).toBe(3);
    expect(f.fence).toBe(true);
    expect(f.grants.total).toBeGreaterThan(10);
    expect(f.duplicates).toBe(0);
    expect(f.lateEndsAccepted).toBe(0);
    expect(f.reclaim.crashes).toBeGreaterThan(0);
    expect(f.reclaim.reclaimed).toBeGreaterThan(0);

    const streams = await runBench(['fanout', ...bases, '--streams', '30', '--rate', '20', '--duration', '3s', '--reconnect-storm', '1500ms', '--json']);
    expect(streams.code, said(streams)).toBe(0);
    expect(streams.figures.streams.opened).toBe(30);
    expect(streams.figures.lost).toEqual({ before: 0, after: 0 });
    expect(streams.figures.duplicated).toEqual({ before: 0, after: 0 });
    expect(streams.figures.deliveries.total).toBe(streams.figures.publishes.acknowledged * 30);
  });
});
