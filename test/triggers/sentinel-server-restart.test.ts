// A sentinel on this project's runs (`@runs`) across a server restarted
// without its state (`npm start` keeps it in memory): the daemon subscribes
// to the run monitor made again, and reacts to the runs that follow. The new
// server numbers its observations from 1 again, so the first run after the
// restart lands at a seq the sentinel had reacted to on the old server; its
// record of reactions (kept against a crash) named the seq alone, and the
// sentinel took the new run for the old one: it logged the old reaction's run
// and never reacted. Checked from the target's own file of reactions.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type RestartableServer, startRestartableServer } from '../support/server-process.ts';
import { lines, type Running, type Scratch, scratchProject, startDaemon, vigilAsync, waitFor } from './helpers.ts';

let server: RestartableServer | undefined;
let daemon: Running | undefined;
let project: Scratch | undefined;

afterEach(async () => {
  if (daemon && daemon.child.exitCode === null && daemon.child.signalCode === null) {
    daemon.child.kill('SIGTERM');
    await daemon.exited;
  }
  await server?.kill();
  project?.cleanup();
  daemon = undefined;
  server = undefined;
  project = undefined;
});

describe('a sentinel on @runs whose server restarts without its state', () => {
  it('subscribes again and reacts to the next run, though it lands at a seq it reacted to before the restart', { timeout: 120_000 }, async () => {
    server = await startRestartableServer();
    const p = scratchProject();
    project = p;
    p.recipe({ name: 'build', type: 'sequence', canary: false, steps: [{ label: 'go', backend: 'shell', prompt: 'true' }] });
    p.recipe({
      name: 'on-run',
      type: 'sentinel',
      watch: { monitor: '@runs', filter: { types: ['ai.vigil.recipe.run'] } },
      mode: 'command',
      target: 'echo "$OBSERVATION_SEQ $OBSERVATION_SUBJECT" >> reactions.txt',
      notify: 'never',
    });
    writeFileSync(join(p.root, 'vigil.yml'), `server:\n  base: ${server.url}\n`);
    const ran = async () => {
      const r = await vigilAsync(p, ['sequence', 'build']);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      return /run (\d{8}-\d{6}-[0-9a-f]+)/.exec(r.stdout)![1]!;
    };
    // The daemon's own observations (its firings) would move the seqs the runs land at.
    daemon = startDaemon(p, {}, ['--no-publish']);
    const d = daemon;
    await waitFor('the sentinel to subscribe to @runs', () => d.log().includes('subscribed to @runs'));
    const first = await ran();
    await waitFor('the sentinel to react to the first run', () => lines(p.read('reactions.txt')).some((l) => l.endsWith(` ${first}`)));

    await server.restart();
    await waitFor('the sentinel to subscribe again', () => d.log().split('subscribed to @runs').length > 2, 60_000);
    const second = await ran();
    await waitFor(`the sentinel to react to ${second} (it said:\n${daemon.log()})`, () => lines(p.read('reactions.txt')).some((l) => l.endsWith(` ${second}`)), 60_000).catch((error: Error) => {
      throw new Error(`${error.message}\nreactions:\n${p.read('reactions.txt')}\ndaemon:\n${daemon!.log()}`);
    });
    // The two runs' observations share a seq, as the new server numbers from 1 again.
    const [a, b] = [first, second].map((run) => lines(p.read('reactions.txt')).find((l) => l.endsWith(` ${run}`))!.split(' ')[0]);
    expect(b).toBe(a);
    expect(daemon.log()).toContain(`→ run`);
  });
});
