// The fault-injection run in its short form (test/cluster/chaos/chaos.ts):
// one round of each fault (a restart of its own PostgreSQL server among
// them) on three real nodes under mixed load, with clients that give up
// after 1.5 s (a pause lasts 3 s) and try another node, then every
// invariant checked from the clients' records. `npm run chaos` runs it for
// minutes with longer pauses.
import { describe, expect, it } from 'vitest';
import { pgInstanceUnavailable } from '../support/pg-instance.ts';
import { postgresFor } from '../support/postgres.ts';
import { requirement } from '../support/requirements.ts';
import { faults, runChaos } from './chaos/chaos.ts';

const unavailable = (await postgresFor('the cluster chaos test')) ?? requirement('postgresql', pgInstanceUnavailable(), 'the cluster chaos test (a PostgreSQL server of its own)');

describe.skipIf(unavailable !== undefined)('three nodes under faults', () => {
  it('lose no acknowledged write, keep one feed and never give a lease twice through kill -9, pause, database loss, SIGTERM, a restart of every node and of PostgreSQL', { timeout: 300_000 }, async () => {
    const result = await runChaos({ rounds: faults, pauseMs: 3000, timeoutMs: 1500 });
    expect(result.violations).toEqual([]);
    expect(result.stats.publishes.acknowledged).toBeGreaterThan(0);
    expect(result.stats.grants).toBeGreaterThan(0);
  });
});
