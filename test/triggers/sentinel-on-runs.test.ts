// A sentinel on this project's runs (`@runs`) with a real server and daemon:
// - it reacts once per ended run and never to its own reactions, which the
//   daemon publishes as runs of the sentinel: it reacted to each, a reaction
//   a second for as long as the daemon ran (the how-to's own set-up did);
// - across a server restarted without its state (`npm start` keeps it in
//   memory), it subscribes to the run monitor made again and reacts to the
//   runs that follow. The new server numbers its observations from 1 again,
//   so the first run after the restart lands at a seq reacted to before; its
//   record of reactions (kept against a crash) named the seq alone, and the
//   sentinel took the new run for the old one and never reacted.
// Checked from the daemon's log and the target's own file of reactions.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type RestartableServer, startRestartableServer } from '../support/server-process.ts';
import { cliEntry } from '../support/cli-entry.ts';
import { lines, type Running, type Scratch, scratchProject, startDaemon, stopDaemon, vigilAsync, waitFor } from './helpers.ts';

let server: RestartableServer | undefined;
let daemon: Running | undefined;
let project: Scratch | undefined;

afterEach(async () => {
  await stopDaemon(daemon, 'SIGTERM');
  await server?.kill();
  project?.cleanup();
  daemon = undefined;
  server = undefined;
  project = undefined;
});

/** The subjects (run ids) the sentinel reacted to, in order, from the daemon's log. */
const reactedTo = (log: string) => [...log.matchAll(/observation \d+ \((\S+)\) → run/g)].map((m) => m[1]!);

describe('a sentinel on @runs', () => {
  for (const mode of ['recipe', 'command'] as const) {
    it(`reacts once per ended run, never to its own reactions the daemon publishes (${mode} target)`, { timeout: 120_000 }, async () => {
      server = await startRestartableServer();
      const p = scratchProject();
      project = p;
      writeFileSync(join(p.root, 'vigil.yml'), `server:\n  base: ${server.url}\n`);
      p.recipe({ name: 'build', type: 'sequence', canary: false, steps: [{ label: 'go', backend: 'shell', prompt: 'true' }] });
      p.recipe({ name: 'triage', type: 'sequence', canary: false, parameters: { OBSERVATION_SUBJECT: { description: 'the run' } }, steps: [{ label: 'note', backend: 'shell', prompt: 'true' }] });
      p.recipe({
        name: 'on-run',
        type: 'sentinel',
        watch: { monitor: '@runs', filter: { types: ['ai.vigil.recipe.run'] } },
        mode,
        target: mode === 'recipe' ? 'triage' : 'true',
        notify: 'never',
      });
      daemon = startDaemon(p);
      const d = daemon;
      await waitFor('the sentinel to subscribe to @runs', () => d.log().includes('subscribed to @runs'));
      const ran = async () => {
        const r = await vigilAsync(p, ['sequence', 'build']);
        expect(r.code, r.stdout + r.stderr).toBe(0);
        return /run (\d{8}-\d{6}-[0-9a-f]+)/.exec(r.stdout)![1]!;
      };
      const first = await ran();
      await waitFor(`the reaction to ${first}`, () => reactedTo(d.log()).includes(first));
      // Its reaction was published as a run of the sentinel before the next run starts, and comes before it in the feed.
      const second = await ran();
      await waitFor(`the reaction to ${second}`, () => reactedTo(d.log()).includes(second));
      expect(reactedTo(d.log())).toEqual([first, second]);
    });
  }

  it("reacts neither to the children of its composite target nor to another @runs sentinel's reactions (they fed each other without end)", { timeout: 120_000 }, async () => {
    server = await startRestartableServer();
    const p = scratchProject();
    project = p;
    writeFileSync(join(p.root, 'vigil.yml'), `server:\n  base: ${server.url}\n`);
    p.recipe({ name: 'build', type: 'sequence', canary: false, steps: [{ label: 'go', backend: 'shell', prompt: 'true' }] });
    p.recipe({ name: 'note', type: 'sequence', canary: false, steps: [{ label: 'note', backend: 'shell', prompt: 'true' }] });
    // Each reaction of the first runs a composite: its children are runs of "note", which end and are published.
    p.recipe({ name: 'triage-all', type: 'parallel', recipe: 'note', transfer_mode: 'none', vars: [{ A: '1' }, { A: '2' }], parameters: { OBSERVATION_SUBJECT: { description: 'the run' } } });
    const watch = { monitor: '@runs', filter: { types: ['ai.vigil.recipe.run'] } };
    p.recipe({ name: 'on-run', type: 'sentinel', watch, mode: 'recipe', target: 'triage-all', notify: 'never' });
    // The second's command runs a recipe: its run carries the reaction's trigger.
    p.recipe({ name: 'also-on-run', type: 'sentinel', watch, mode: 'command', target: `${JSON.stringify(process.execPath)} ${JSON.stringify(cliEntry)} sequence note`, notify: 'never' });
    daemon = startDaemon(p);
    const d = daemon;
    await waitFor('both sentinels to subscribe to @runs', () => d.log().split('subscribed to @runs').length > 2);
    const byEach = (name: string) => [...d.log().matchAll(new RegExp(`sentinel ${name}: observation \\d+ \\((\\S+)\\) → run \\S+ (?:succeeded|failed)`, 'g'))].map((m) => m[1]!);
    const ran = async () => {
      const r = await vigilAsync(p, ['sequence', 'build']);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      return /run (\d{8}-\d{6}-[0-9a-f]+)/.exec(r.stdout)![1]!;
    };
    const first = await ran();
    await waitFor(`both reactions to ${first} to end`, () => byEach('on-run').includes(first) && byEach('also-on-run').includes(first), 60_000);
    // Whatever those reactions published lands before the second run in the feed, and is read before it.
    const second = await ran();
    await waitFor(`both reactions to ${second} to end`, () => byEach('on-run').includes(second) && byEach('also-on-run').includes(second), 60_000);
    expect(byEach('on-run'), d.log()).toEqual([first, second]);
    expect(byEach('also-on-run'), d.log()).toEqual([first, second]);
  });

  it('whose server restarts without its state subscribes again and reacts to the next run, though it lands at a seq it reacted to before the restart', { timeout: 120_000 }, async () => {
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
