// The slots' store on a real server, in process: a runner whose subscription the server made while the
// answer was lost (killed after its commit) subscribes again under a name of its own. Two stores in one
// process stand for it: they share the runner's name, and the second does not know the first's token.
import { afterEach, describe, expect, it } from 'vitest';
import { ServerSlots } from '../../src/recipes/concurrency/server-slots.ts';
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
});
