// `vigil bench` against three real nodes on one PostgreSQL database, its
// clients spread over the nodes as over a cluster: no two holders at once and
// crashed holders' leases reclaimed (expiry runs on one node, the next grant
// may come from any), every event to every stream once when the streams and
// the publisher sit on different nodes, and a monitor written through every
// node at once served by each of them. A few seconds of load each.
import { describe, expect, it } from 'vitest';
import { runBench, said } from '../bench/run-bench.ts';
import { call } from '../support/client.ts';
import { postgresFor } from '../support/postgres.ts';
import { nodesOnOneDatabase, untilNodesSeeEachOther } from './nodes.ts';

const unavailable = await postgresFor('the cluster bench tests');

describe.skipIf(unavailable !== undefined)('vigil bench against three PostgreSQL nodes', () => {
  const cluster = nodesOnOneDatabase();
  // Each run makes a monitor of its own, and no test kills a node.
  const admin = 'vga_bench-nodes-admin-token-of-the-test';
  const shared = cluster.shared(3, ['--allow-admin', admin]);

  /** `vigil bench <scenario> --json` with its clients spread over the three nodes; its figures once it exited 0. */
  async function benchAcross(scenario: string, flags: string[]): Promise<{ figures: any; said: string }> {
    const nodes = shared();
    await untilNodesSeeEachOther(nodes);
    const run = await runBench([scenario, ...nodes.flatMap((n) => ['--base', n.url]), ...flags, '--json']);
    expect(run.code, said(run)).toBe(0);
    return { figures: run.figures, said: said(run) };
  }

  it('leases: no violation, crashed holders reclaimed across nodes', { timeout: 180_000 }, async () => {
    // Three seconds are three times the 1 s lease: crashed holders' leases expire and are granted again
    // within them, also when four cluster files load the machine and the first crash comes late (with
    // two, one run in five of the cluster folder counted crashes and no reclaim).
    const { figures: f } = await benchAcross('leases', ['--clients', '12', '--subjects', '6', '--hold', '5ms-30ms', '--lease-seconds', '1', '--crash', '0.1', '--duration', '3s']);
    expect(f.servers.map((s: { node: string }) => s.node).every(Boolean)).toBe(true);
    expect(new Set(f.servers.map((s: { node: string }) => s.node)).size).toBe(3);
    expect(f.fence).toBe(true);
    expect(f.grants.total).toBeGreaterThan(10);
    expect(f.duplicates).toBe(0);
    expect(f.lateEndsAccepted).toBe(0);
    expect(f.reclaim.crashes).toBeGreaterThan(0);
    expect(f.reclaim.reclaimed).toBeGreaterThan(0);

    const streams = await benchAcross('fanout', ['--streams', '30', '--rate', '20', '--duration', '3s', '--reconnect-storm', '1500ms']);
    expect(streams.figures.streams.opened).toBe(30);
    expect(streams.figures.lost).toEqual({ before: 0, after: 0 });
    expect(streams.figures.duplicated).toEqual({ before: 0, after: 0 });
    expect(streams.figures.deliveries.total).toBe(streams.figures.publishes.acknowledged * 30);
  });

  // Commits are optimistic, and the node that just committed kept winning, while one node's requests
  // lost race after race and took seconds (up to 16 s), or failed after 50 attempts (STORE_UNAVAILABLE);
  // it answered 2-15 % of the requests. Nodes now take turns (src/cluster/turns.ts). Judged from the
  // clients' own records (every request answered, none refused but for the workload's own refusals)
  // and from each node's count of the most races one write lost (/admin/snapshot). With two busy loops
  // taking the cores, in 8 runs without turns the nodes' worst writes lost 7-39 races, the middle node's
  // 15-24 (and a node answered 1 % of the requests); in 24 runs with them, 3-6 on every node. A loaded
  // CI run once saw 12 on one node (4 and 5 on the others): the middle node's is judged. How many
  // requests each node answers depends on the CPU it gets as much as on races (one got 17 % in a loaded
  // CI run): only a node answering almost nothing fails that.
  it('a monitor written through every node at once: no request fails after lost races, none of the nodes starves', { timeout: 180_000 }, async () => {
    const { figures: f, said: run } = await benchAcross('leases', ['--mode', 'next', '--clients', '36', '--subjects', '1500', '--hold', '0ms-5ms', '--duration', '8s', '--seed', '7']);
    expect(f.duplicates).toBe(0);
    expect(f.lateEndsAccepted).toBe(0);
    // Nothing was refused but for what the workload asks for: no work left at the end, a lease lost to expiry.
    const codes = Object.keys(f.refusals as Record<string, number>).map((key) => key.split(' ').at(-1));
    expect(codes.filter((code) => code !== 'NO_WORK' && code !== 'LEASE_LOST'), run).toEqual([]);
    const perNode = (f.nodes as Array<{ root: string; latency: { n: number }; unanswered: number }>).map((n) => ({ root: n.root, answered: n.latency.n, unanswered: n.unanswered }));
    expect(perNode.map((n) => n.unanswered)).toEqual([0, 0, 0]);
    const total = perNode.reduce((sum, n) => sum + n.answered, 0);
    expect(total).toBeGreaterThan(300);
    for (const node of perNode) expect(node.answered, `${node.root} answered ${node.answered} of ${total} requests\n${run}`).toBeGreaterThan(total / 10);
    // The operator sees the contention on each node: lost races, and turns asked and given; no write gave up.
    const contention = await Promise.all(shared().map(async (n) => (await call(n.base, 'GET', '/admin/snapshot', { token: admin })).body.store.contention));
    expect(contention.map((c) => c.gave_up)).toEqual([0, 0, 0]);
    // The middle of the three nodes' worst writes: one node's may be a moment the machine gave it no CPU.
    const worst = contention.map((c) => c.most_lost_by_one_write).sort((a, b) => a - b);
    expect(worst[1], JSON.stringify(contention)).toBeLessThanOrEqual(10);
    expect(contention.reduce((sum, c) => sum + c.lost_races, 0)).toBeGreaterThan(0);
    expect(contention.reduce((sum, c) => sum + c.turns_asked, 0)).toBeGreaterThan(0);
    expect(contention.reduce((sum, c) => sum + c.turns_held_for_others, 0)).toBeGreaterThan(0);
  });
});
