// A sentinel's reaction is fenced by its lease. Two sentinel daemons of one
// recipe watch one monitor with 6 s leases; the first to claim the subject
// starts a long agent, and its daemon is stopped with SIGSTOP past the
// lease's expiry while the second takes the subject over. The agent's guard
// stops it at the lease's expiry; after SIGCONT the first daemon records its
// run `fenced` and leaves the lease alone, and exactly one reaction completes
// it. The invariants come from the agents' own log of starts and exits.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { type Fleet, startFleet } from '../../bench/lib/sentinel-fleet.ts';
import { replayAll, subscribe } from '../support/client.ts';
import { scaled } from '../support/time-scale.ts';
import { until, untilTrue } from '../support/until.ts';
import { cliEntry as vigilBin } from '../support/cli-entry.ts';

const agent = resolve(import.meta.dirname, '../fakes/slot-agent.mjs');
// Short, yet long enough that a loaded machine's stalls do not fence the reaction that takes over.
const LEASE_SECONDS = 6;
/** The documented window (docs/triggers.md): the guard's SIGTERM-to-SIGKILL grace. */
const WINDOW_MS = 2000;

interface Entry {
  event: 'start' | 'exit';
  time: number;
  pid: number;
  runner: string | null;
  signal?: string;
}

let fleet: Fleet | null = null;
afterEach(async () => {
  for (const s of fleet?.sentinels ?? []) if (s?.child.exitCode === null) s.child.kill('SIGCONT');
  await fleet?.stop();
  fleet = null;
});

// The first agent to start runs long (it is the one fenced), every later one briefly; each checks its lease first.
const TARGET = [
  'me=$(basename "$PWD")',
  'env | grep ^VIGIL_LEASE_ > "$OUT/lease.$me.env"',
  `node ${JSON.stringify(vigilBin)} lease check --quiet; echo "$me $?" >> "$OUT/checks.log"`,
  'if mkdir "$OUT/first" 2>/dev/null; then ms=120000; else ms=1000; fi',
  `SLOT_LOG="$OUT/agents.jsonl" SLOT_RUNNER="$me" SLOT_AGENT_MS=$ms node ${JSON.stringify(agent)}`,
].join('\n');

function readLog(out: string): Entry[] {
  const file = join(out, 'agents.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Entry);
}

function runsOf(root: string): Array<{ status: string; reason?: string }> {
  const dir = join(root, '.vigil', 'runs');
  if (!existsSync(dir)) return [];
  return readdirSync(dir).map((id) => JSON.parse(readFileSync(join(dir, id, 'run.json'), 'utf8')) as { status: string; reason?: string });
}

function leaseCheck(envFile: string): number | null {
  const env: Record<string, string> = { ...(process.env as Record<string, string>) };
  for (const line of readFileSync(envFile, 'utf8').split('\n').filter(Boolean)) {
    const at = line.indexOf('=');
    env[line.slice(0, at)] = line.slice(at + 1);
  }
  return spawnSync(process.execPath, [vigilBin, 'lease', 'check'], { env, encoding: 'utf8' }).status;
}

describe('a sentinel reaction fenced by its lease', () => {
  it('a sentinel stopped past its lease: its agent is stopped, its run is fenced, one reaction completes the lease', async () => {
    fleet = await startFleet({ instances: 2, target: TARGET, leaseSeconds: LEASE_SECONDS, concurrency: 1 });
    const f = fleet;
    await untilTrue('the sentinels to subscribe', () => f.sentinels.every((s) => s.log().includes('subscribed to')));
    await f.publishAll(1, 1, 1, 0);
    const first = await until('the first agent to start', () => readLog(f.out).find((e) => e.event === 'start'));
    const i = Number(first.runner!.replace('sentinel-', ''));
    const paused = f.sentinels[i]!;
    const other = f.sentinels[1 - i]!;
    paused.child.kill('SIGSTOP');
    // The other sentinel takes the subject over once the lease expired, and its reaction ends.
    const second = await until('the second agent to start', () => readLog(f.out).find((e) => e.event === 'start' && e.runner !== first.runner), scaled(60_000));
    await untilTrue('the second reaction to succeed', () => /→ run \S+ succeeded/.test(other.log()), scaled(60_000));
    const resumedAt = Date.now();
    paused.child.kill('SIGCONT');
    await untilTrue('the first sentinel to record its run fenced', () => / fenced \(/.test(paused.log()), scaled(30_000));

    const entries = readLog(f.out);
    const firstExit = entries.find((e) => e.event === 'exit' && e.pid === first.pid);
    // Stopped by its guard at the lease's expiry, while its daemon was still stopped: within one renewal interval of the resume at most.
    expect(firstExit, JSON.stringify(entries)).toBeDefined();
    expect(firstExit!.signal).toBe('SIGTERM');
    expect(firstExit!.time).toBeLessThanOrEqual(resumedAt + (LEASE_SECONDS * 1000) / 3);
    // The two agents overlap by at most the documented window.
    expect(Math.max(0, firstExit!.time - second.time)).toBeLessThanOrEqual(WINDOW_MS);

    expect(runsOf(paused.root).map((r) => r.status)).toEqual(['fenced']);
    expect(runsOf(paused.root)[0]!.reason).toMatch(/fenced: no renewal of the lease on "s-0" succeeded by its expiry|fenced: the lease on "s-0" was lost/);
    // The reaction that took over succeeded (once: a renewal a stalled machine could not send in time fences it too, and it runs again).
    expect(runsOf(other.root).filter((r) => r.status === 'succeeded')).toHaveLength(1);
    expect(runsOf(other.root).every((r) => r.status === 'succeeded' || r.status === 'fenced')).toBe(true);

    // Exactly one completion of the subject's lease, by the reaction that succeeded.
    const reader = await subscribe(f.server.base, { monitor: f.monitor, subscriber: 'test-reader', from: 'earliest' }, f.ownerToken);
    const leases = (await replayAll(f.server.base, reader)).filter((o) => o.type === 'ai.vigil.monitor.lease' && o.subject === 's-0').map((o) => o.data.payload);
    expect(leases.filter((p) => p.action === 'complete')).toHaveLength(1);

    // The lease check a reaction runs: 0 while its grant held (both checked at their start), 1 for the fenced grant now.
    const checks = readFileSync(join(f.out, 'checks.log'), 'utf8').trim().split('\n');
    expect(checks.sort()).toEqual([`${first.runner} 0`, `${second.runner} 0`].sort());
    expect(leaseCheck(join(f.out, `lease.${first.runner}.env`))).toBe(1);
  }, scaled(180_000));
});
