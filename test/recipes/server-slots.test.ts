// The slots' store on a real server, in process: a runner whose subscription the server made while the
// answer was lost (killed after its commit) subscribes again under a name of its own. Two stores in one
// process stand for it: they share the runner's name, and the second does not know the first's token.
import { afterEach, describe, expect, it } from 'vitest';
import { ServerSlots } from '../../src/recipes/concurrency/server-slots.ts';
import { SLOT_TYPE } from '../../src/recipes/concurrency/slot-pool.ts';
import { serverClient } from '../../src/server-client/server-client.ts';
import { type ServerProcess, startServerProcess, tempDir } from '../support/server-process.ts';

let server: ServerProcess | null = null;
const stores: ServerSlots[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  await server?.kill();
  server = null;
});

describe('slots on a server', () => {
  it('a runner whose name already has a subscription it holds no token for subscribes under a name of its own', async () => {
    server = await startServerProcess();
    const env = { ...process.env, VIGIL_HOME: tempDir('vigil-home-') };
    const open = () => {
      const store = new ServerSlots({ base: server!.url }, 60, () => {}, env);
      stores.push(store);
      return store;
    };
    const signal = new AbortController().signal;
    const first = await (await open().enter('claude', 1, { run: 'r1', step: 'a' }, signal)).tryTake();
    expect('grant' in first).toBe(true);
    // It was refused UNAUTHORIZED ("already has a subscription"), which failed the step.
    const second = await (await open().enter('claude', 1, { run: 'r2', step: 'b' }, signal)).tryTake();
    expect(second).toEqual({ holders: ['run r1 step a'] });
  });

  it('passes over a pool monitor whose maker never published its slots, once it is old enough, and every runner meets on the next', async () => {
    server = await startServerProcess();
    const env = { ...process.env, VIGIL_HOME: tempDir('vigil-home-') };
    // A runner killed between making the monitor and publishing its slots.
    await serverClient(server.url).request('POST', '/monitors', {
      body: { id: 'vigil.concurrency.claude', visibility: 'public', capabilities: ['observe', 'act'], default_grant: ['observe', 'act'], types: [SLOT_TYPE] },
    });
    const warnings: string[] = [];
    const open = (graceS: number) => {
      const store = new ServerSlots({ base: server!.url }, 60, (line) => warnings.push(line), env, graceS);
      stores.push(store);
      return store;
    };
    const signal = new AbortController().signal;
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
});
