// The fault-injection run in its short form (test/cluster/chaos/chaos.ts):
// one round of each fault on three real nodes under mixed load, then every
// invariant checked from the clients' records. `npm run chaos` runs it for
// minutes with longer pauses.
import { describe, expect, it } from 'vitest';
import { postgresFor } from '../support/postgres.ts';
import { faults, runChaos } from './chaos/chaos.ts';

const unavailable = await postgresFor('the cluster chaos test');

describe.skipIf(unavailable !== undefined)('three nodes under faults', () => {
  it('lose no acknowledged write, keep one feed and never give a lease twice through kill -9, pause, database loss, SIGTERM and a restart of every node', { timeout: 240_000 }, async () => {
    const result = await runChaos({ rounds: faults, pauseMs: 3000 });
    expect(result.violations).toEqual([]);
    expect(result.stats.publishes.acknowledged).toBeGreaterThan(0);
    expect(result.stats.grants).toBeGreaterThan(0);
  });
});
