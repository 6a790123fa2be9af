// A fleet of sentinel processes for the exactly-once test and its benchmark:
// one `vigil serve`, one monitor with observe+act, and N projects holding the
// same sentinel recipe, each run by its own `vigil daemon` (the instance id is
// per machine and project, so each is one sentinel instance). The recipe's
// target appends the observation's seq to a shared log: reactions are
// counted from that side effect, not from the sentinels' own logs.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { call, createMonitor, publish, subscribe } from '../../test/support/client.ts';
import { type ServerProcess, startServerProcess } from '../../test/support/server-process.ts';

const vigilBin = resolve(import.meta.dirname, '../../bin/vigil.js');

export interface Sentinel {
  root: string;
  child: ChildProcess;
  log(): string;
  exited: Promise<void>;
}

export interface Fleet {
  server: ServerProcess;
  monitor: string;
  ownerToken: string;
  out: string;
  sentinels: Sentinel[];
  /** The sentinels' HOME (their Vigil home is its .vigil). */
  home: string;
  start(i: number): Sentinel;
  kill(i: number): Promise<void>;
  reactions(): number[];
  publishAll(count: number, subjects: number, batch?: number, pauseMs?: number): Promise<number[]>;
  stop(): Promise<void>;
}

export interface FleetOptions {
  instances: number;
  target: string;
  concurrency?: number;
  leaseSeconds?: number;
  /** More recipe fields (debounce, filter, …). */
  recipe?: Record<string, unknown>;
  /** watch.filter of the recipe. */
  filter?: Record<string, unknown>;
  /** Publish the daemons' firings and reactions to the same server (vigil.yml `server`). */
  publishToServer?: boolean;
  /** The monitor's capabilities (default observe and act, what a sentinel needs). */
  capabilities?: string[];
  /** A running server to use (the fleet makes its own monitor on it and leaves it running); by default the fleet starts its own. */
  server?: ServerProcess;
}

export async function startFleet(options: FleetOptions): Promise<Fleet> {
  const base = mkdtempSync(join(tmpdir(), 'vigil-fleet-'));
  const out = join(base, 'out');
  mkdirSync(join(out, 'started'), { recursive: true });
  const home = join(base, 'home');
  mkdirSync(home, { recursive: true });
  const server = options.server ?? (await startServerProcess());
  const { id: monitor, ownerToken } = await createMonitor(server.base, { capabilities: options.capabilities ?? ['observe', 'act'] });
  const roots = Array.from({ length: options.instances }, (_, i) => {
    const root = join(base, `sentinel-${i}`);
    mkdirSync(join(root, '.vigil', 'recipes'), { recursive: true });
    const recipe = {
      name: 'react',
      type: 'sentinel',
      watch: { monitor, base: server.url, token: ownerToken, ...(options.filter ? { filter: options.filter } : {}) },
      mode: 'command',
      target: options.target,
      concurrency: options.concurrency ?? 4,
      lease_seconds: options.leaseSeconds ?? 300,
      notify: 'never',
      ...options.recipe,
      // The recipe's own vars are added to OUT (they declare which trigger variables the target takes).
      vars: { OUT: out, ...((options.recipe?.vars as Record<string, string> | undefined) ?? {}) },
    };
    writeFileSync(join(root, '.vigil', 'recipes', 'react.json'), JSON.stringify(recipe));
    if (options.publishToServer) writeFileSync(join(root, 'vigil.yml'), `server:\n  base: ${server.url}\n`);
    return root;
  });
  const sentinels: Sentinel[] = [];
  const fleet: Fleet = {
    server,
    monitor,
    ownerToken,
    out,
    sentinels,
    home,
    start(i) {
      const args = options.publishToServer ? ['daemon'] : ['daemon', '--no-publish'];
      const child = spawn(process.execPath, [vigilBin, ...args], { cwd: roots[i]!, env: { ...process.env, HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
      let log = '';
      child.stdout!.on('data', (b: Buffer) => (log += b.toString()));
      child.stderr!.on('data', (b: Buffer) => (log += b.toString()));
      const s = { root: roots[i]!, child, log: () => log, exited: new Promise<void>((r) => child.on('exit', () => r())) };
      sentinels[i] = s;
      return s;
    },
    async kill(i) {
      sentinels[i]!.child.kill('SIGKILL');
      await sentinels[i]!.exited;
    },
    reactions() {
      try {
        return readFileSync(join(out, 'reactions.log'), 'utf8').split('\n').filter(Boolean).map(Number);
      } catch {
        return [];
      }
    },
    async publishAll(count, subjects, batch = 10, pauseMs = 50) {
      const seqs: number[] = [];
      for (let n = 0; n < count; n += batch) {
        const observations = Array.from({ length: Math.min(batch, count - n) }, (_, k) => ({ type: 'work.item', subject: `s-${(n + k) % subjects}`, data: { n: n + k } }));
        const reply = await publish(server.base, monitor, ownerToken, { observations });
        if (reply.status !== 201) throw new Error(`publish failed: ${reply.status} ${JSON.stringify(reply.body)}`);
        seqs.push(...(reply.body.seqs as number[]));
        if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
      }
      return seqs;
    },
    async stop() {
      for (const s of sentinels) if (s && s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGTERM');
      await Promise.all(sentinels.filter(Boolean).map((s) => Promise.race([s.exited, new Promise((r) => setTimeout(r, 5000))])));
      for (const s of sentinels) if (s && s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
      if (!options.server) await server.stop();
      rmSync(base, { recursive: true, force: true });
    },
  };
  for (let i = 0; i < options.instances; i++) fleet.start(i);
  return fleet;
}

/** Waits until `check` holds, polling. */
export async function until(what: string, check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Lease claims of `subjects` distinct subjects per second on `base`, `inFlight` at a time: the yardstick of a fleet's reactions. */
export async function claimRate(base: string, inFlight: number, subjects: number): Promise<number> {
  const { id, ownerToken } = await createMonitor(base, { capabilities: ['observe', 'act'] });
  for (let from = 0; from < subjects; from += 1000) {
    const observations = Array.from({ length: Math.min(1000, subjects - from) }, (_, i) => ({ type: 'work.item', subject: `c-${from + i}` }));
    const reply = await publish(base, id, ownerToken, { observations });
    if (reply.status !== 201) throw new Error(`publish: ${reply.status} ${JSON.stringify(reply.body)}`);
  }
  const sub = await subscribe(base, { monitor: id, subscriber: 'bench:claims', capabilities: ['observe', 'act'] }, ownerToken);
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < subjects) {
        const subject = `c-${next++}`;
        const reply = await call(base, 'POST', `/subscriptions/${sub.id}/leases/claim`, { token: sub.token, body: { subject } });
        if (reply.status !== 201) throw new Error(`claim ${subject}: ${reply.status}`);
      }
    }),
  );
  return subjects / ((performance.now() - started) / 1000);
}
