// `vigil conform` fails (exit 1) against servers broken in one way each, and
// names the checks of exactly the broken rules.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptsUnknownVocabulary, ignoresStoredCursor, lacksReplyDetails, noAuthentication } from '../fakes/broken-faults.ts';
import { type BrokenServer, type Fault, startBrokenProxy } from '../fakes/broken-proxy.ts';
import { type ServerProcess, startServerProcess } from '../support/server-process.ts';
import { failedIds, runConform } from './run-conform.ts';
import { scaled } from '../support/time-scale.ts';

const cases: { name: string; fault: () => Fault; mustFail: string[]; mustPass: string[] }[] = [
  {
    name: 'ignores the stored cursor',
    fault: () => ignoresStoredCursor,
    mustFail: ['MP-9-ack', 'MP-9-limit-next-lag', 'MP-9-replay-cursor', 'MP-9-from-head', 'MP-11-start-committed'],
    mustPass: ['MP-2-discover', 'MP-9-pull-token', 'MP-5-vocabulary', 'MP-12-lease-held'],
  },
  {
    name: 'has no authentication',
    fault: noAuthentication,
    mustFail: ['MP-4-publish-owner', 'MP-3-configure-owner', 'MP-3-private-visibility', 'MP-9-pull-token', 'MP-9-renew', 'MP-11-token', 'MP-9-capability-grant'],
    mustPass: ['MP-2-discover', 'MP-9-ack', 'MP-5-vocabulary', 'MP-12-lease-held'],
  },
  {
    name: 'stores values outside the vocabularies',
    fault: () => acceptsUnknownVocabulary,
    mustFail: ['MP-5-vocabulary', 'MP-3-vocabulary-together', 'MP-3-update-vocabulary', 'MP-4-batch-all-or-nothing', 'MP-5-rejected-recorded'],
    mustPass: ['MP-2-discover', 'MP-9-ack', 'MP-9-pull-token', 'MP-5-tier-src'],
  },
  {
    name: 'lacks the §17 reply details',
    fault: () => lacksReplyDetails,
    mustFail: ['MP-17-retired-token', 'MP-17-lease-replies', 'MP-17-retire-reply'],
    mustPass: ['MP-2-discover', 'MP-9-ack', 'MP-12-lease-held', 'MP-17-whole-second-ages'],
  },
];

// The four broken proxies stand in front of one real server: conform names everything it makes
// uniquely per run (ctx.unique), so runs at once on one server do not meet, and a server per case
// only cost three more server starts. A conform run spends much of its time waiting (on leases,
// streams, retries): the four run at once.
let real: ServerProcess;
beforeAll(async () => {
  real = await startServerProcess({ transport: 'node' });
});
afterAll(async () => {
  await real?.stop();
});

describe.concurrent.each(cases)('vigil conform against a server that $name', ({ fault, mustFail, mustPass }) => {
  let broken: BrokenServer;
  beforeAll(async () => {
    broken = await startBrokenProxy(real.url, fault());
  });
  afterAll(async () => {
    await broken?.close();
  });

  it('exits 1 and fails the checks of the broken rule', async () => {
    const run = await runConform(['--base', broken.url, '--json']);
    expect(run.code, run.stderr).toBe(1);
    const failed = failedIds(run);
    for (const id of mustFail) expect(failed, `${id} should fail`).toContain(id);
    for (const id of mustPass) expect(failed, `${id} should pass`).not.toContain(id);
    expect(run.report!.failed).toBe(failed.length);
    expect(run.report!.passed).toBeGreaterThan(run.report!.checks.length / 2);
  }, scaled(60_000));
});
