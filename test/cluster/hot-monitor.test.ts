// One monitor that clients on three nodes keep writing (take-next and
// complete-and-take-next through every node): commits are optimistic, and the
// node that just committed kept winning, while one node's requests lost race
// after race and took seconds (up to 16 s in `vigil bench`), or failed after
// 50 attempts (STORE_UNAVAILABLE); it answered 2-15 % of the requests. Nodes
// now take turns (src/cluster/turns.ts). Judged from the bench clients' own
// records: every request answered without a store failure, and each node
// answers a fair share of them (the clients are spread evenly and each waits
// for its answer).
import { describe, expect, it } from 'vitest';
import { runBench, said } from '../bench/run-bench.ts';
import { postgresFor } from '../support/postgres.ts';
import { nodesOnOneDatabase, untilNodesSeeEachOther } from './nodes.ts';

const unavailable = await postgresFor('the hot monitor test');

describe.skipIf(unavailable !== undefined)('a monitor written through three nodes at once', () => {
  const cluster = nodesOnOneDatabase();

  it('is served by every node: no request fails after lost races, none of the nodes starves', { timeout: 180_000 }, async () => {
    const nodes = await cluster.start(3);
    await untilNodesSeeEachOther(nodes);
    const bases = nodes.flatMap((n) => ['--base', n.url]);
    const run = await runBench(['leases', ...bases, '--mode', 'next', '--clients', '36', '--subjects', '1500', '--hold', '0ms-5ms', '--duration', '8s', '--seed', '7', '--json']);
    expect(run.code, said(run)).toBe(0);
    const f = run.figures;
    expect(f.duplicates).toBe(0);
    expect(f.lateEndsAccepted).toBe(0);
    // Nothing was refused but for what the workload asks for: no work left at the end, a lease lost to expiry.
    const codes = Object.keys(f.refusals as Record<string, number>).map((key) => key.split(' ').at(-1));
    expect(codes.filter((code) => code !== 'NO_WORK' && code !== 'LEASE_LOST'), said(run)).toEqual([]);
    const perNode = (f.nodes as Array<{ root: string; latency: { n: number }; unanswered: number }>).map((n) => ({ root: n.root, answered: n.latency.n, unanswered: n.unanswered }));
    expect(perNode.map((n) => n.unanswered)).toEqual([0, 0, 0]);
    const total = perNode.reduce((sum, n) => sum + n.answered, 0);
    expect(total).toBeGreaterThan(300);
    // A fair share is a third; on the old code one node answered 8 % and 15 % in two runs of this test.
    for (const node of perNode) expect(node.answered, `${node.root} answered ${node.answered} of ${total} requests\n${said(run)}`).toBeGreaterThan(total / 5);
  });
});
