// Issue 26, point 7: a cluster node's replica is bounded. A node reading a
// monitor of many observations (seeded straight into PostgreSQL) serves the
// head page, a middle page, an event stream from the start and new publishes
// right, keeps its resident memory under 300 MB throughout, drops the monitor
// from its replica once it is cold and over --replica-budget, reads it again
// from PostgreSQL after that, and leaves no replica file behind when it stops.
//
// 200,000 observations here, to keep the file's time modest; the promise is
// made for 1,000,000, which bench/replica-memory.ts runs (docs/scaling.md has
// its numbers). A node holding its replica in memory, as before, peaked at
// 384 MB at this size already.
import { describe, expect, it } from 'vitest';
import { readBigMonitor } from '../support/big-monitor.ts';
import { postgresFor } from '../support/postgres.ts';
import { nodesOnOneDatabase } from './nodes.ts';

const unavailable = await postgresFor('the cluster tests');

describe.skipIf(unavailable !== undefined)('a node reading a monitor of 200,000 observations', () => {
  const cluster = nodesOnOneDatabase();

  it('serves every page right under 300 MB of resident memory, and drops the monitor when cold', { timeout: 240_000 }, async () => {
    const run = await readBigMonitor({
      url: cluster.database().url,
      observations: 200_000,
      budgetMB: 16,
      streamed: 20_000,
      started: (node) => cluster.adopt(node),
    });
    console.log(`bounded replica: peak RSS ${run.peakRssMB} MB; seconds ${JSON.stringify(run.seconds)}; MB ${JSON.stringify(run.stepRssMB)}`);
    expect(run.problems, run.output).toEqual([]);
    expect(run.peakRssMB).toBeLessThan(300);
    expect(run.replicaDirs).toEqual({ running: 1, stopped: 0 });
  });
});
