// A daemon started while the server of its vigil.yml is away (a machine whose
// daemon comes up before its server) publishes its firings once the server
// answers: it waits for it as for a server that goes away later, instead of
// publishing nothing for as long as it runs.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { serverCacheFile } from '../../src/recipes/publish/run-monitor.ts';
import { type ServerProcess, stablePort, startServerProcess } from '../support/server-process.ts';
import { lines, type Running, type Scratch, scratchProject, startDaemon, stopDaemon, waitFor } from './helpers.ts';

let s: Scratch | undefined;
let daemon: Running | undefined;
let server: ServerProcess | undefined;

afterEach(async () => {
  await stopDaemon(daemon);
  await server?.kill();
  s?.cleanup();
  daemon = server = s = undefined;
});

describe('vigil daemon with its server away at its start', () => {
  it('queues its firings and publishes them once the server answers', { timeout: 90_000 }, async () => {
    const port = await stablePort();
    s = scratchProject();
    writeFileSync(join(s.root, 'vigil.yml'), `server:\n  base: http://127.0.0.1:${port}\n`);
    s.recipe({ name: 'tick', type: 'temporal', schedule: '* * * * * *', mode: 'command', target: 'echo tick >> tick.txt' });
    daemon = startDaemon(s);
    await waitFor('a firing while the server is away', () => lines(s!.read('tick.txt')).length >= 1);
    expect(daemon.log()).toMatch(/publishing to the server stopped: .*cannot reach http:\/\/127\.0\.0\.1:\d+\/mp\/v0: connect ECONNREFUSED/);

    server = await startServerProcess({ port });
    await waitFor('the daemon to publish', () => daemon!.log().includes('publishing to the server resumed after'), 60_000);
    // The project's run monitor on the server holds the firings, those queued while it was away among them.
    const cache = JSON.parse(readFileSync(serverCacheFile(s.root, { VIGIL_HOME: join(s.home, '.vigil') }), 'utf8')) as Record<string, { watch: { subscription: string; token: string } }>;
    const { watch } = Object.values(cache)[0]!;
    const page = (await (await fetch(`${server.base}/subscriptions/${watch.subscription}/pull?limit=200`, { headers: { authorization: `Bearer ${watch.token}` } })).json()) as {
      observations: Array<{ type: string; data: { recipe?: string; status?: string } }>;
    };
    const ticks = page.observations.filter((o) => o.type === 'ai.vigil.recipe.run' && o.data.recipe === 'tick' && o.data.status === 'succeeded');
    expect(ticks.length).toBeGreaterThanOrEqual(1);
    expect(daemon.log()).not.toContain('the run goes on without it');
  });
});
