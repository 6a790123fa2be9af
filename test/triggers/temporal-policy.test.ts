// The temporal policy driven by a fake clock: real target processes, real
// vigil.db and run records, no waiting for wall-clock schedule boundaries.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TemporalRecipe } from '../../src/recipes/types.ts';
import { FakeClock } from '../../src/triggers/clock.ts';
import { TemporalApi } from '../../src/triggers/temporal-api.ts';
import { TemporalScheduler } from '../../src/triggers/temporal/temporal-scheduler.ts';
import { TriggerStore } from '../../src/triggers/trigger-store.ts';
import { type Scratch, scratchProject, waitFor } from './helpers.ts';

const T0 = Date.parse('2026-03-01T00:00:00.000Z');

let s: Scratch;
let store: TriggerStore;
let clock: FakeClock;
let logs: string[];
let scheduler: TemporalScheduler | null;

function start(recipe: Partial<TemporalRecipe>, options: { starting?: boolean; random?: () => number } = {}): TemporalScheduler {
  const full = { name: 'job', type: 'temporal', schedule: '*/10 * * * * *', mode: 'command', target: 'echo ran >> out.txt', ...recipe } as TemporalRecipe;
  const file = s.recipe(full as unknown as Record<string, unknown>);
  scheduler = new TemporalScheduler({ projectRoot: s.root, store, clock, env: s.env, log: (l) => logs.push(l) }, options.random);
  scheduler.set([{ recipe: full, file }], options.starting ?? true);
  return scheduler;
}

/** Advances the fake clock one second at a time, letting each firing's process finish. */
async function advance(seconds: number): Promise<void> {
  for (let i = 0; i < seconds; i++) {
    await clock.advance(1000);
    await scheduler!.idle();
  }
}

const ran = () => store.firings('job').filter((f) => f.status !== 'skipped');
const skipped = (reason: string) => store.firings('job').filter((f) => f.status === 'skipped' && f.reason === reason).length;

beforeEach(() => {
  s = scratchProject();
  store = TriggerStore.open(s.root);
  clock = new FakeClock(T0);
  logs = [];
  scheduler = null;
});

afterEach(async () => {
  scheduler?.stop();
  await scheduler?.idle();
  store.close();
  s.cleanup();
});

describe('temporal schedule on a fake clock', () => {
  it('fires at each due time of the cron, and each firing is a run record with its trigger and output', async () => {
    start({ target: 'echo "hello $WHO"; echo x >> out.txt', vars: { WHO: 'world' } });
    expect(store.temporal('job')!.next_run).toBe('2026-03-01T00:00:10.000Z');
    await advance(60);
    const firings = ran();
    expect(firings.map((f) => new Date(f.due_ms).toISOString().slice(11, 19))).toEqual(['00:00:10', '00:00:20', '00:00:30', '00:00:40', '00:00:50', '00:01:00']);
    expect(s.read('out.txt').split('\n').filter(Boolean)).toHaveLength(6);
    const run = JSON.parse(readFileSync(join(s.root, '.vigil', 'runs', firings[0]!.run_id, 'run.json'), 'utf8'));
    expect(run).toMatchObject({ type: 'temporal', trigger: 'temporal:job', status: 'succeeded', recipe: 'job' });
    expect(readFileSync(join(s.root, '.vigil', 'runs', firings[0]!.run_id, 'output.txt'), 'utf8')).toBe('hello world\n');
    expect(store.temporal('job')!.next_run).toBe('2026-03-01T00:01:10.000Z');
  });

  it('honours the timezone of the schedule', async () => {
    start({ schedule: '0 9 * * *', timezone: 'Asia/Tokyo' });
    // 09:00 in Tokyo is 00:00 UTC.
    expect(store.temporal('job')!.next_run).toBe('2026-03-02T00:00:00.000Z');
  });

  it('breaks the circuit after the threshold, skips until the reset ttl, then lets one firing through', async () => {
    start({ target: 'exit 3', circuit_breaker_threshold: 2, circuit_breaker_reset_ttl: 35 });
    await advance(20);
    expect(store.temporal('job')).toMatchObject({ consecutive_failures: 2, circuit_broken: 1 });
    await advance(30); // dues at 30, 40, 50 are inside the reset ttl
    expect(skipped('circuit_open')).toBe(3);
    expect(ran()).toHaveLength(2);
    await advance(10); // at 60 the reset ttl (35 s after 20) has passed: one firing goes through
    expect(ran()).toHaveLength(3);
    expect(store.temporal('job')).toMatchObject({ consecutive_failures: 3, circuit_broken: 1 });
    // A success closes the circuit and zeroes the failures.
    new TemporalApi({ cwd: s.root, clock }).status('job');
    s.recipe({ name: 'job', type: 'temporal', schedule: '*/10 * * * * *', mode: 'command', target: 'true', circuit_breaker_threshold: 2, circuit_breaker_reset_ttl: 35 });
    await new TemporalApi({ cwd: s.root, clock, env: s.env }).fire('job');
    expect(store.temporal('job')).toMatchObject({ consecutive_failures: 0, circuit_broken: 0 });
  });

  it('a threshold of 0 never breaks the circuit', async () => {
    start({ target: 'exit 1', circuit_breaker_threshold: 0 });
    await advance(50);
    expect(ran()).toHaveLength(5);
    expect(store.temporal('job')).toMatchObject({ consecutive_failures: 5, circuit_broken: 0 });
  });

  it('skips firings inside the cooldown after the last one ended', async () => {
    start({ cooldown: 25 });
    await advance(60);
    expect(ran().map((f) => (f.due_ms - T0) / 1000)).toEqual([10, 40]);
    expect(skipped('cooldown')).toBe(4);
  });

  it('skips a firing due while the last still runs, and records it', async () => {
    start({ target: 'sleep 2; echo done >> out.txt' });
    await clock.advance(10_000);
    await waitFor('the first firing to start', () => ran().length === 1);
    await clock.advance(10_000); // due at 20 while the first still sleeps
    expect(skipped('overlap')).toBe(1);
    await scheduler!.idle();
    expect(ran().map((f) => f.status)).toEqual(['succeeded']);
  });

  it('kills a firing at its ttl; on_ttl_expire "rerun" runs it once more', async () => {
    start({ target: 'echo start >> out.txt; sleep 30', ttl: 5, on_ttl_expire: 'rerun' });
    await clock.advance(10_000);
    await waitFor('the first attempt', () => s.read('out.txt').split('\n').filter(Boolean).length === 1);
    await clock.advance(5_000); // ttl: killed, rerun once
    await waitFor('the rerun', () => s.read('out.txt').split('\n').filter(Boolean).length === 2);
    await clock.advance(5_000); // ttl of the rerun: killed for good
    await scheduler!.idle();
    const [firing] = ran();
    expect(firing).toMatchObject({ status: 'failed', reason: 'killed after its ttl of 5 s' });
    const run = JSON.parse(readFileSync(join(s.root, '.vigil', 'runs', firing!.run_id, 'run.json'), 'utf8'));
    expect(run.steps[0]).toMatchObject({ status: 'killed' });
  });

  it('delays each firing by the jitter', async () => {
    start({ jitter: 4 }, { random: () => 0.5 });
    await clock.advance(11_000);
    expect(ran()).toHaveLength(0);
    await clock.advance(1_000);
    await scheduler!.idle();
    expect(ran()).toHaveLength(1);
    expect(ran()[0]!.started_ms - T0).toBe(12_000);
  });

  it('catch_up "once" fires one missed firing at start; "skip" records it as missed', async () => {
    store.patchTemporal('job', { next_run: new Date(T0 - 3600_000).toISOString() });
    start({ catch_up: 'once' });
    await scheduler!.idle();
    expect(ran()).toHaveLength(1);
    scheduler!.stop();
    store.patchTemporal('job', { next_run: new Date(T0 - 3600_000).toISOString() });
    start({ catch_up: 'skip' });
    await scheduler!.idle();
    expect(ran()).toHaveLength(1);
    expect(skipped('missed')).toBe(1);
  });

  it('enable and disable through the API stop and restart the schedule', async () => {
    start({});
    const api = new TemporalApi({ cwd: s.root, clock });
    api.disable('job');
    scheduler!.refreshEnabled();
    expect(api.list()[0]).toMatchObject({ name: 'job', enabled: false, consecutive_failures: 0, circuit_broken: false });
    expect(api.list()[0]!.next_run).toBeUndefined();
    await advance(30);
    expect(ran()).toHaveLength(0);
    api.enable('job');
    scheduler!.refreshEnabled();
    await advance(10);
    expect(ran()).toHaveLength(1);
    expect(api.list()[0]).toMatchObject({ enabled: true, last_run: '2026-03-01T00:00:40.000Z', next_run: '2026-03-01T00:00:50.000Z' });
  });
});
