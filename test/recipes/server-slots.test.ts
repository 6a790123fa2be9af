// The slots' store on a real server, in process: a runner whose subscription the server made while the
// answer was lost (killed after its commit) subscribes again under a name of its own. Two stores in one
// process stand for it: they share the runner's name, and the second does not know the first's token.
import { afterEach, describe, expect, it } from 'vitest';
import { ServerSlots } from '../../src/recipes/concurrency/server-slots.ts';
import { SLOT_TYPE } from '../../src/recipes/concurrency/slot-pool.ts';
import { serverClient } from '../../src/server-client/server-client.ts';
import { join } from 'node:path';
import { type RestartableServer, type ServerProcess, stablePort, startRestartableServer, startServerProcess, tempDir } from '../support/server-process.ts';
import { untilTrue } from '../support/until.ts';

let server: ServerProcess | RestartableServer | null = null;
const stores: ServerSlots[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  await server?.kill();
  server = null;
});

/** What a runner killed between making a pool's monitor and publishing its slots leaves. */
const unpublishedPool = (url: string) =>
  serverClient(url).request('POST', '/monitors', {
    body: { id: 'vigil.concurrency.claude', visibility: 'public', capabilities: ['observe', 'act'], default_grant: ['observe', 'act'], types: [SLOT_TYPE] },
  });

/** A store per call, as each runner has one, sharing a Vigil home (and so the runner's name). */
function runnersOn(url: string, options: { leaseSeconds?: number; unpublishedGraceS?: number; warn?: (line: string) => void } = {}) {
  const env = { ...process.env, VIGIL_HOME: tempDir('vigil-home-') };
  return (unpublishedGraceS = options.unpublishedGraceS): ServerSlots => {
    const store = new ServerSlots({ base: url }, options.leaseSeconds ?? 60, options.warn ?? (() => {}), env, unpublishedGraceS);
    stores.push(store);
    return store;
  };
}

const signal = new AbortController().signal;

describe('slots on a server', () => {
  it('a runner whose name already has a subscription it holds no token for subscribes under a name of its own', async () => {
    server = await startServerProcess();
    const open = runnersOn(server.url);
    const first = await (await open().enter('claude', 1, { run: 'r1', step: 'a' }, signal)).tryTake();
    expect('grant' in first).toBe(true);
    // It was refused UNAUTHORIZED ("already has a subscription"), which failed the step.
    const second = await (await open().enter('claude', 1, { run: 'r2', step: 'b' }, signal)).tryTake();
    expect(second).toEqual({ holders: ['run r1 step a'] });
  });

  it('passes over a pool monitor whose maker never published its slots, once it is old enough, and every runner meets on the next', async () => {
    server = await startServerProcess();
    await unpublishedPool(server.url);
    const warnings: string[] = [];
    const open = runnersOn(server.url, { warn: (line) => warnings.push(line) });
    // Young: its maker may still be publishing them. It was "held by another runner", for ever.
    const young = await (await open(3600).enter('claude', 1, { run: 'r1', step: 'a' }, signal)).tryTake();
    expect(young).toEqual({ holders: [], unavailable: 'the slots of vigil.concurrency.claude are not published yet (its maker may still be publishing them)' });

    const granted = await (await open(0).enter('claude', 1, { run: 'r2', step: 'b' }, signal)).tryTake();
    expect('grant' in granted).toBe(true);
    expect(warnings).toEqual([
      expect.stringMatching(/^vigil: made vigil\.concurrency\.claude\.2 on http:\S+ for the slots of "claude": vigil\.concurrency\.claude has no slots \(its maker stopped before publishing them\)$/),
    ]);
    // Another runner starting now meets it there: the cap holds across the move.
    const other = await (await open(0).enter('claude', 1, { run: 'r3', step: 'c' }, signal)).tryTake();
    expect(other).toEqual({ holders: ['run r2 step b'] });
  });

  it('a runner that moved on to the next generation meets the others on the first again once the server restarts without its state', async () => {
    const restartable = await startRestartableServer();
    server = restartable;
    await unpublishedPool(restartable.url);
    const open = runnersOn(restartable.url, { unpublishedGraceS: 0 });
    const moved = open();
    const first = await (await moved.enter('claude', 1, { run: 'r1', step: 'a' }, signal)).tryTake();
    if (!('grant' in first)) throw new Error(`no grant: ${JSON.stringify(first)}`);

    await restartable.restart();
    await first.grant.release();
    expect('grant' in (await (await open().enter('claude', 1, { run: 'r2', step: 'b' }, signal)).tryTake())).toBe(true);
    // The moved runner finds its subscription gone, opens the pool again and meets the new one's slot:
    // it made vigil.concurrency.claude.2 again, where it would hold a slot beside it.
    const waiter = await moved.enter('claude', 1, { run: 'r1', step: 'c' }, signal);
    expect(await waiter.tryTake()).toEqual({ holders: [], unavailable: expect.stringMatching(/lost this runner's subscription to vigil\.concurrency\.claude\.2; subscribing again$/) });
    expect(await waiter.tryTake()).toEqual({ holders: ['run r2 step b'] });
  });

  it('a slot whose agent ended while the server was away is freed once it is back, not when its lease expires', async () => {
    const port = await stablePort();
    const state = join(tempDir(), 'vigil.db');
    server = await startServerProcess({ port, state });
    const open = runnersOn(server.url, { leaseSeconds: 3600 });
    const first = await (await open().enter('claude', 1, { run: 'r1', step: 'a' }, signal)).tryTake();
    if (!('grant' in first)) throw new Error(`no grant: ${JSON.stringify(first)}`);

    await server.kill();
    await first.grant.release();
    server = await startServerProcess({ port, state });
    const waiter = await open().enter('claude', 1, { run: 'r2', step: 'b' }, signal);
    // It was held for the rest of its hour-long lease.
    await untilTrue('the slot to be freed', async () => 'grant' in (await waiter.tryTake()));
  });
});

