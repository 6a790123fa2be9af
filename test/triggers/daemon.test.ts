// The real `vigil daemon` process: an every-second schedule, the one-daemon
// lock, recipe files added and removed while it runs, enable/disable from
// another process, and a kill -9 in the middle of a firing.
import { existsSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { describe, expect, it, type TestContext } from 'vitest';
import { TriggerStore } from '../../src/triggers/trigger-store.ts';
import { lines, type Running, type Scratch, scratchProject, startDaemon, stopDaemon, vigilAsync as vigil, waitFor } from './helpers.ts';

interface Project {
  readonly s: Scratch;
  /** Starts the project's daemon; it is killed after the test if still running. */
  daemon(): Running;
}

/** A scratch project of the test's own, removed after it with what its daemons left running. */
function project({ onTestFinished }: TestContext): Project {
  const s = scratchProject();
  const daemons: Running[] = [];
  onTestFinished(async () => {
    for (const d of daemons) await stopDaemon(d);
    s.cleanup();
  });
  return {
    s,
    daemon() {
      const d = startDaemon(s);
      daemons.push(d);
      return d;
    },
  };
}

/** No firing of the project is running (a firing started before a change may still be finishing). */
function idle(root: string): boolean {
  const store = TriggerStore.open(root);
  try {
    return store.runningFirings().length === 0;
  } finally {
    store.close();
  }
}

/**
 * Waits until the every-second `witness` schedule has fired twice more: two of
 * the daemon's scheduler seconds have gone by, in which any other every-second
 * schedule still known to it would have fired too.
 */
async function twoMoreSeconds(s: Scratch, witness = 'witness'): Promise<void> {
  const from = lines(s.read(`${witness}.txt`)).length;
  await waitFor(`two more firings of ${witness}`, () => lines(s.read(`${witness}.txt`)).length >= from + 2, 20_000);
}

/** Processes whose command line contains `text` (read from /proc). */
function processesWith(text: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text);
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

const every = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  type: 'temporal',
  schedule: '* * * * * *',
  mode: 'command',
  target: `echo ${name} >> ${name}.txt`,
  ...extra,
});

// Each test has a project and daemon of its own, and most of their time is spent waiting on the
// daemons' every-second schedules: they run at once.
describe.concurrent('vigil daemon', () => {
  it('fires an every-second schedule, and refuses a second daemon naming the first', { timeout: 90_000 }, async (context) => {
    const { s, daemon } = project(context);
    s.recipe(every('tick'));
    const d = daemon();
    await waitFor('three firings', () => lines(s.read('tick.txt')).length >= 3);
    const second = await vigil(s, ['daemon']);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`pid ${d.child.pid}`);
    expect(second.stderr).toContain('a daemon already runs for this project');
    const list = JSON.parse((await vigil(s, ['temporal', 'list', '--json'])).stdout);
    expect(list[0]).toMatchObject({ name: 'tick', schedule: '* * * * * *', enabled: true, consecutive_failures: 0, circuit_broken: false });
    expect(list[0].last_run).toMatch(/^\d{4}-\d\d-\d\dT/);
    d.child.kill('SIGTERM');
    expect(await d.exited).toBe(0);
    expect(existsSync(`${s.root}/.vigil/daemon.lock`)).toBe(false);
  });

  it('picks up a recipe file added, changed and removed while it runs', { timeout: 90_000 }, async (context) => {
    const { s, daemon } = project(context);
    s.recipe(every('witness'));
    const d = daemon();
    await waitFor('the daemon to start', () => d.log().includes('running for'));
    const file = s.recipe(every('late'));
    await waitFor('the added recipe to fire', () => lines(s.read('late.txt')).length >= 1, 10_000);
    s.recipe(every('late', { target: 'echo changed >> late.txt' }));
    // A fresh clone's CI once waited here in vain: what the daemon said is what would explain it.
    await waitFor('the changed recipe to fire', () => s.read('late.txt').includes('changed'), 10_000).catch((error: Error) => {
      throw new Error(`${error.message}; the daemon said:\n${d.log()}`);
    });
    unlinkSync(file);
    await waitFor('the removal to be seen', () => d.log().includes('temporal late: removed'), 20_000);
    await waitFor('a firing already started to end', () => idle(s.root), 30_000);
    const count = lines(s.read('late.txt')).length;
    await twoMoreSeconds(s);
    expect(lines(s.read('late.txt')).length).toBe(count);
  });

  it('disable and enable from another process take effect in the running daemon', { timeout: 90_000 }, async (context) => {
    const { s, daemon } = project(context);
    s.recipe(every('tick'));
    s.recipe(every('witness'));
    const d = daemon();
    await waitFor('a firing', () => lines(s.read('tick.txt')).length >= 1);
    expect((await vigil(s, ['temporal', 'disable', 'tick'])).stdout).toBe('temporal tick disabled\n');
    await waitFor('the daemon to see it', () => d.log().includes('temporal tick: disabled'), 20_000);
    await waitFor('a firing started before to end', () => idle(s.root), 30_000);
    const count = lines(s.read('tick.txt')).length;
    await twoMoreSeconds(s);
    expect(lines(s.read('tick.txt')).length).toBe(count);
    await vigil(s, ['temporal', 'enable', 'tick']);
    await waitFor('firings again', () => lines(s.read('tick.txt')).length > count, 10_000);
  });

  it('after kill -9 mid-firing, the firing is recorded interrupted, its target is gone, and the schedule resumes', { timeout: 90_000 }, async (context) => {
    const { s, daemon } = project(context);
    // The target's command line names this project, so that its processes can be told apart from any other test's.
    const target = `echo start >> slow.txt; sleep 3; echo end >> slow.txt # ${s.root}`;
    s.recipe(every('slow', { schedule: '*/2 * * * * *', target }));
    const d = daemon();
    await waitFor('a firing to start', () => lines(s.read('slow.txt')).length >= 1);
    d.child.kill('SIGKILL');
    await d.exited;
    // The target dies with its daemon: its processes go, and the line it would write after its sleep never comes.
    await waitFor('the target to be gone', () => processesWith(target).length === 0, 10_000);
    expect(s.read('slow.txt')).not.toContain('end');
    const d2 = daemon();
    await waitFor('the interruption to be recorded', () => d2.log().includes('was interrupted'));
    await waitFor('a firing after the restart', () => lines(s.read('slow.txt')).length >= 2);
    const store = TriggerStore.open(s.root);
    try {
      expect(store.firings('slow').map((f) => f.status)).toContain('interrupted');
    } finally {
      store.close();
    }
    expect((await vigil(s, ['runs'])).stdout).toContain('interrupted');
  });

  it('temporal fire prints the output, exits 1 on failure, and names unknown recipes', { timeout: 90_000 }, async (context) => {
    const { s } = project(context);
    s.recipe(every('hello', { target: 'echo "hi $NAME"', vars: { NAME: 'there' } }));
    s.recipe(every('broken', { target: 'echo oops >&2; exit 4' }));
    const ok = await vigil(s, ['temporal', 'fire', 'hello']);
    expect(ok).toMatchObject({ code: 0, stdout: 'hi there\n' });
    expect((await vigil(s, ['temporal', 'fire', 'broken'])).code).toBe(1);
    const status = JSON.parse((await vigil(s, ['temporal', 'status', 'broken', '--json'])).stdout);
    expect(status).toMatchObject({ name: 'broken', consecutive_failures: 1, last_firing: { status: 'failed', reason: 'exited with 4' } });
    const missing = await vigil(s, ['temporal', 'fire', 'nope']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no temporal recipe named "nope"; temporal recipes: broken, hello');
    expect((await vigil(s, ['temporal', 'frob'])).stderr).toContain('unknown action "frob"');
  });

  it('refuses an invalid temporal recipe naming the field', { timeout: 90_000 }, async (context) => {
    const { s } = project(context);
    s.recipe({ name: 'bad', type: 'temporal', schedule: '61 * * * *', target: 'x', shedule: 'typo' });
    const out = await vigil(s, ['recipe', 'check', 'bad']);
    expect(out.stdout).toContain('shedule');
    s.recipe({ name: 'bad', type: 'temporal', schedule: '61 * * * *', target: 'x', timezone: 'Mars/Olympus' });
    const out2 = await vigil(s, ['recipe', 'check', 'bad']);
    expect(out2.stdout).toContain('timezone: "Mars/Olympus" is not an IANA time zone');
    s.recipe({ name: 'bad', type: 'temporal', schedule: '61 * * * *', target: 'x' });
    expect((await vigil(s, ['recipe', 'list'])).stderr).toContain('invalid recipe');
    expect((await vigil(s, ['recipe', 'check', 'bad'])).stdout).toContain('schedule: "61 * * * *" is not a cron expression');
  });
});

describe.concurrent('recipe-mode targets', () => {
  it('temporal fire of a recipe target returns the run output, and the child run names its trigger and parent', { timeout: 90_000 }, async (context) => {
    const { s } = project(context);
    const { chmodSync, writeFileSync } = await import('node:fs');
    const agent = `${s.root}/agent.sh`;
    writeFileSync(agent, '#!/bin/sh\necho "report for $TOPIC"\n');
    chmodSync(agent, 0o755);
    writeFileSync(`${s.root}/vigil.yml`, `providers:\n  sh:\n    type: custom\n    command: ${agent}\n`);
    s.recipe({ name: 'report', canary: false, steps: [{ label: 'write', backend: 'sh', args: [] }] });
    s.recipe({ name: 'nightly', type: 'temporal', schedule: '0 3 * * *', mode: 'recipe', target: 'report', vars: { TOPIC: 'billing' } });
    const out = await vigil(s, ['temporal', 'fire', 'nightly', '--json']);
    expect(out.code, out.stderr).toBe(0);
    const fired = JSON.parse(out.stdout);
    expect(fired).toMatchObject({ status: 'succeeded', output: 'report for billing\n' });
    const runs = JSON.parse((await vigil(s, ['runs', '--json'])).stdout) as Array<{ id: string; recipe: string; trigger?: string; parent?: string }>;
    const child = runs.find((r) => r.recipe === 'report');
    expect(child).toMatchObject({ trigger: 'temporal:nightly', parent: fired.run_id });
  });
});
