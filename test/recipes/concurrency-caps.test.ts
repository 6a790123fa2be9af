// vigil.yml `concurrency` caps across runners: three `vigil sequence`
// processes, each a parallel of 4 claude steps, never have more than 2 agents
// alive at once, on one machine (lock files) and through a server (leases);
// a runner killed with -9 while holding slots holds the others up at most
// for the slots' lease. The invariants are read from the agents' own log of
// starts and exits, never from Vigil's records.
import { chmodSync, copyFileSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type ServerProcess, stablePort, startRestartableServer, startServerProcess, tempDir } from '../support/server-process.ts';
import { scaled } from '../support/time-scale.ts';
import { until, untilTrue } from '../support/until.ts';
import { fakesDir, makeProject, type Project, runVigil, startVigil, type VigilProcess } from './helpers.ts';

interface Entry {
  event: 'start' | 'exit';
  time: number;
  pid: number;
  run: string | null;
  step: string | null;
  runner: string | null;
}

const projects: Project[] = [];
const runners: VigilProcess[] = [];
let server: ServerProcess | null = null;
afterEach(async () => {
  for (const r of runners.splice(0)) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
  for (const p of projects.splice(0)) p.cleanup();
  await server?.kill();
  server = null;
});

function readLog(file: string): Entry[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Entry);
}

/** The most agents alive at once: starts and exits in time order (an exit before a start at the same ms). */
function mostAlive(entries: Entry[]): number {
  const sorted = [...entries].sort((a, b) => a.time - b.time || (a.event === 'exit' ? -1 : 1));
  let alive = 0;
  let most = 0;
  for (const e of sorted) {
    alive += e.event === 'start' ? 1 : -1;
    most = Math.max(most, alive);
  }
  return most;
}

/** A project whose `claude` is the logging stand-in, with a parallel of `width` one-step children. */
function capProject(yml: string, width: number): Project {
  const project = makeProject({ claude: false });
  projects.push(project);
  copyFileSync(join(fakesDir, 'slot-agent.mjs'), join(project.bin, 'claude'));
  chmodSync(join(project.bin, 'claude'), 0o755);
  project.yml(yml);
  project.recipe({ name: 'one', canary: false, steps: [{ label: 'work', backend: 'claude', args: ['work'] }] });
  project.recipe({ name: 'fan', type: 'parallel', recipe: 'one', fanout: width, vars: Array.from({ length: width }, (_, i) => ({ N: String(i) })) });
  return project;
}

async function threeRunners(yml: string, home: string, log: string): Promise<void> {
  const started = [0, 1, 2].map((i) => {
    const p = capProject(yml, 4);
    const r = startVigil(p, ['sequence', 'fan'], { VIGIL_HOME: home, SLOT_LOG: log, SLOT_RUNNER: String(i), SLOT_AGENT_MS: '400' });
    r.child.stdin!.end();
    runners.push(r);
    return r;
  });
  const results = await Promise.all(started.map((r) => r.done));
  for (const r of results) expect(r.code, r.stdout + r.stderr).toBe(0);
  const entries = readLog(log);
  expect(entries.filter((e) => e.event === 'start')).toHaveLength(12);
  expect(entries.filter((e) => e.event === 'exit')).toHaveLength(12);
  expect(mostAlive(entries)).toBeLessThanOrEqual(2);
  // At least one step had to wait, and said for what and behind whom.
  expect(started.map((r) => r.stdout()).join('\n')).toMatch(/waiting for a claude slot: 2 of 2 held by run \S+ step work and run \S+ step work/);
  // Each step told to wait is told when its agent starts, once, after its wait.
  for (const r of started) {
    const lines = r.stdout().split('\n');
    const waited = new Set(lines.map((l) => /^\S+ (.+ › work): waiting for a claude slot/.exec(l)?.[1]).filter((s) => s !== undefined));
    for (const step of waited) {
      const got = lines.flatMap((l, i) => (l.includes(` ${step}: got its slot after `) && /after \d+\.\ds; its agent starts$/.test(l) ? [i] : []));
      expect(got, r.stdout()).toHaveLength(1);
      expect(lines.findIndex((l) => l.includes(`${step}: waiting for a claude slot`))).toBeLessThan(got[0]!);
    }
  }
}

describe('concurrency caps of vigil.yml', () => {
  it('refuses a cap that names no backend, or is not a whole number from 1 to 64, naming the field', async () => {
    const p = capProject('concurrency:\n  clade: 2\n', 1);
    const bad = await runVigil(p, ['sequence', 'one']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/concurrency\.clade: not a backend; allowed are claude, codex, all/);
    p.yml('concurrency:\n  claude: 0\n');
    const zero = await runVigil(p, ['sequence', 'one']);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toMatch(/concurrency\.claude/);
    // Its slots on a server are the monitor vigil.concurrency.<name>(.<generation>), whose id holds 64.
    const long = 'a-provider-whose-name-runs-past-forty-chars';
    p.yml(`providers:\n  ${long}: { type: custom, command: ./agent.sh }\nconcurrency:\n  ${long}: 1\n`);
    const tooLong = await runVigil(p, ['sequence', 'one']);
    expect(tooLong.code).toBe(2);
    expect(tooLong.stderr).toContain(`concurrency: property name "${long}" is not allowed (names are letters, digits, _, . and -, starting with a letter or digit, at most 40 characters)`);
  });

  it('without a server, three runners of a parallel of 4 keep at most 2 claude agents alive at once (lock files in the Vigil home)', async () => {
    const home = tempDir('vigil-caps-home-');
    await threeRunners('concurrency:\n  claude: 2\n', home, join(home, 'agents.jsonl'));
    // Nothing is left held once every runner ended.
    await untilTrue('no slot file left', () => !existsSync(join(home, 'concurrency', 'claude', 'slot-1.json')) && !existsSync(join(home, 'concurrency', 'claude', 'slot-2.json')));
  }, scaled(120_000));

  it('with a server, the same cap holds through leases on vigil.concurrency.claude', async () => {
    server = await startServerProcess();
    const home = tempDir('vigil-caps-home-');
    await threeRunners(`server:\n  base: ${server.url}\nconcurrency:\n  claude: 2\nconcurrency_lease_seconds: 10\n`, home, join(home, 'agents.jsonl'));
    // The slots are leases of a public monitor (what the dashboard's lease timeline draws): 12 grants, each completed.
    const sub = await fetch(`${server.base}/subscriptions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ monitor: 'vigil.concurrency.claude', subscriber: 'test', from: 'earliest' }),
    }).then((r) => r.json() as Promise<{ subscription: { id: string }; token: string }>);
    const page = await fetch(`${server.base}/subscriptions/${sub.subscription.id}/pull?cursor=1&limit=1000&types=ai.vigil.monitor.lease`, { headers: { authorization: `Bearer ${sub.token}` } }).then(
      (r) => r.json() as Promise<{ observations: Array<{ type: string; subject: string; data: { payload?: { action: string; fence: number } } }> }>,
    );
    const leases = page.observations.filter((o) => o.type === 'ai.vigil.monitor.lease').map((o) => ({ subject: o.subject, ...o.data.payload! }));
    expect(leases.filter((l) => l.action === 'claim')).toHaveLength(12);
    expect(leases.filter((l) => l.action === 'complete')).toHaveLength(12);
    expect(new Set(leases.map((l) => l.subject))).toEqual(new Set(['slot-1', 'slot-2']));
    // The runner that made the monitor keeps its owner token, 0600, for the dashboard's lease timeline.
    const kept = join(home, 'concurrency', 'monitors.json');
    expect(statSync(kept).mode & 0o077).toBe(0);
    const token = (JSON.parse(readFileSync(kept, 'utf8')) as Record<string, string>)[`${server.base}#vigil.concurrency.claude`];
    const publish = (bearer: string) =>
      fetch(`${server!.base}/monitors/vigil.concurrency.claude/observations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'ai.vigil.concurrency.slot', subject: 'slot-1', data: {} }),
      });
    expect((await publish('vgo_not-the-owner')).status).toBe(401);
    expect((await publish(token!)).status).toBe(201);
  }, scaled(120_000));

  it('with a server that accepted the connection and stopped answering (SIGSTOP), Ctrl-C cancels a step waiting for its slot at once', async () => {
    server = await startServerProcess();
    const home = tempDir('vigil-caps-home-');
    const log = join(home, 'agents.jsonl');
    const project = capProject(`server:\n  base: ${server.url}\nconcurrency:\n  claude: 1\n`, 1);
    server.child.kill('SIGSTOP');
    try {
      const r = startVigil(project, ['sequence', 'one'], { VIGIL_HOME: home, SLOT_LOG: log, SLOT_RUNNER: 'a', SLOT_AGENT_MS: '100' });
      runners.push(r);
      r.child.stdin!.end();
      // The step asks the paused server for its slot once it says it runs; before, that request held the run for five minutes.
      await r.waitFor(/work: running/);
      r.child.kill('SIGINT');
      const result = await r.done;
      expect(result.code, result.stdout + result.stderr).toBe(130);
      expect(result.stdout).toMatch(/work: cancelled [\d.]+s — not started: the run was cancelled by SIGINT/);
      expect(readLog(log)).toEqual([]);
    } finally {
      server.child.kill('SIGCONT');
    }
  }, scaled(120_000));

  it('with a server restarted without its state while a step waits for its slot, the step subscribes again and runs instead of waiting for ever', async () => {
    const restartable = await startRestartableServer();
    try {
      const home = tempDir('vigil-caps-home-');
      const log = join(home, 'agents.jsonl');
      const project = capProject(`server:\n  base: ${restartable.url}\nconcurrency:\n  claude: 1\n`, 2);
      const r = startVigil(project, ['sequence', 'fan'], { VIGIL_HOME: home, SLOT_LOG: log, SLOT_RUNNER: 'a', SLOT_AGENT_MS: '3000' });
      runners.push(r);
      r.child.stdin!.end();
      await r.waitFor(/waiting for a claude slot: 1 of 1 held by run \S+ step work/, 30_000);
      // In memory, as `npm start` serves: the restarted server knows neither the slots' monitor nor the runner's subscription.
      await restartable.restart();
      const result = await r.done;
      expect(result.code, result.stdout + result.stderr).toBe(0);
      expect(result.stdout + result.stderr).toContain(`no longer has this runner's subscription to vigil.concurrency.claude (restarted without its state?): subscribing again`);
      const entries = readLog(log);
      expect(entries.filter((e) => e.event === 'start')).toHaveLength(2);
      expect(entries.filter((e) => e.event === 'exit')).toHaveLength(2);
    } finally {
      await restartable.kill();
    }
  }, scaled(120_000));

  it('with a durable server killed while a step waits for a slot another runner holds, the step waits the outage out and runs once the server is back', async () => {
    const home = tempDir('vigil-caps-home-');
    const state = join(home, 'server.db');
    // Below the ephemeral range: the runners' own connections could take the port while the server is away.
    const port = await stablePort();
    server = await startServerProcess({ state, port });
    const log = join(home, 'agents.jsonl');
    const finish = join(home, 'finish');
    const yml = `server:\n  base: ${server.url}\nconcurrency:\n  claude: 1\n`;
    const start = (runner: string): VigilProcess => {
      const r = startVigil(capProject(yml, 1), ['sequence', 'one'], { VIGIL_HOME: home, SLOT_LOG: log, SLOT_RUNNER: runner, SLOT_AGENT_UNTIL: finish });
      runners.push(r);
      r.child.stdin!.end();
      return r;
    };
    const holder = start('a');
    await untilTrue('the first agent to start', () => readLog(log).some((e) => e.event === 'start'));
    const waiter = start('b');
    await waiter.waitFor(/waiting for a claude slot: 1 of 1 held by run \S+ step work/, 30_000);
    await server.kill();
    // The waiting step asks during the outage (it used to fail there), and says so.
    await waiter.waitFor(/waiting for a claude slot: cannot reach [^\n]*; asking again every second/, 30_000);
    server = await startServerProcess({ state, port });
    writeFileSync(finish, '');
    for (const r of [holder, waiter]) {
      const result = await r.done;
      expect(result.code, result.stdout + result.stderr).toBe(0);
    }
    const entries = readLog(log);
    expect(entries.filter((e) => e.event === 'start').map((e) => e.runner)).toEqual(['a', 'b']);
    expect(mostAlive(entries)).toBe(1);
  }, scaled(120_000));

  it('with a server still starting (or restarting) when a runner first asks for a slot, the step waits for it and runs', async () => {
    const home = tempDir('vigil-caps-home-');
    const port = await stablePort();
    const log = join(home, 'agents.jsonl');
    const r = startVigil(capProject(`server:\n  base: http://127.0.0.1:${port}\nconcurrency:\n  claude: 1\n`, 1), ['sequence', 'one'], { VIGIL_HOME: home, SLOT_LOG: log, SLOT_RUNNER: 'a' });
    runners.push(r);
    r.child.stdin!.end();
    // It failed the step at once: a runner that began while its server restarted lost every agent step.
    await r.waitFor(/waiting for a claude slot: cannot reach [^\n]*; asking again every second/, 30_000);
    server = await startServerProcess({ port });
    const result = await r.done;
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(readLog(log).map((e) => e.event)).toEqual(['start', 'exit']);
  }, scaled(120_000));

  it('with a server that dies while an agent holds its slot, the runner says once that the slot lapsed and lets the agent finish', async () => {
    server = await startServerProcess();
    const home = tempDir('vigil-caps-home-');
    const log = join(home, 'agents.jsonl');
    const finish = join(home, 'finish');
    const project = capProject(`server:\n  base: ${server.url}\nconcurrency:\n  claude: 1\nconcurrency_lease_seconds: 2\n`, 1);
    const r = startVigil(project, ['sequence', 'one'], { VIGIL_HOME: home, SLOT_LOG: log, SLOT_RUNNER: 'a', SLOT_AGENT_UNTIL: finish });
    runners.push(r);
    r.child.stdin!.end();
    await untilTrue('the agent to start', () => readLog(log).some((e) => e.event === 'start'));
    await server.kill();
    // No renewal reaches the server for a whole lease: the slot is no longer this runner's, and it says so.
    await untilTrue('the runner to say the slot lapsed', () => (r.stdout() + r.stderr()).includes('succeeded by its expiry'));
    writeFileSync(finish, '');
    const result = await r.done;
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const said = result.stdout + result.stderr;
    expect(said.split('succeeded by its expiry').length - 1, said).toBe(1);
    expect(said).toMatch(/vigil: vigil\.concurrency\.claude slot-1 \(run \S+ step work\): no renewal of the lease on "slot-1" succeeded by its expiry; the agent goes on past the cap/);
    expect(readLog(log).map((e) => e.event)).toEqual(['start', 'exit']);
  }, scaled(120_000));

  for (const withServer of [false, true]) {
    it(`a runner killed with -9 holding both slots delays the next at most by the slots' lease (${withServer ? 'server' : 'lock files'})`, async () => {
      if (withServer) server = await startServerProcess();
      const home = tempDir('vigil-caps-home-');
      const log = join(home, 'agents.jsonl');
      const leaseSeconds = 3;
      const yml = `${server ? `server:\n  base: ${server.url}\n` : ''}concurrency:\n  claude: 2\nconcurrency_lease_seconds: ${leaseSeconds}\n`;
      const holder = capProject(yml, 2);
      const a = startVigil(holder, ['sequence', 'fan'], { VIGIL_HOME: home, SLOT_LOG: log, SLOT_RUNNER: 'a', SLOT_AGENT_MS: '600000' });
      runners.push(a);
      await until('both agents of the first runner to start', () => (readLog(log).filter((e) => e.runner === 'a' && e.event === 'start').length === 2 ? true : undefined));
      const waiter = capProject(yml, 1);
      const b = startVigil(waiter, ['sequence', 'one'], { VIGIL_HOME: home, SLOT_LOG: log, SLOT_RUNNER: 'b', SLOT_AGENT_MS: '100' });
      runners.push(b);
      await b.waitFor(/waiting for a claude slot: 2 of 2 held by run \S+ step work and run \S+ step work/, 30_000);
      const killedAt = Date.now();
      a.child.kill('SIGKILL');
      const result = await b.done;
      expect(result.code, result.stdout + result.stderr).toBe(0);
      const bStart = readLog(log).find((e) => e.runner === 'b' && e.event === 'start')!;
      // The lease lapses at most one lease after the last renewal, which came before the kill.
      const delay = bStart.time - killedAt;
      expect(delay).toBeLessThanOrEqual(leaseSeconds * 1000 + scaled(2000));
      if (!withServer) expect(delay).toBeLessThan(leaseSeconds * 1000);
    }, scaled(120_000));
  }
});

