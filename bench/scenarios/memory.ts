// 7 memory per actor kind: a fresh server per kind, `count` actors of that
// kind created, server RSS and JS heap read after a full collection (admin
// snapshot) against the same before. Kinds: monitors, live subscriptions (the < 400 MB target
// at 100,000), held leases (distinct subjects, each claimed and held), and
// live sources (formula sources: evaluated by the server itself, no outside
// load; each is a monitor too, so the per-source figure includes one).
import os from 'node:os';
import type { BenchContext } from '../lib/context.ts';
import { json, type Requester } from '../lib/http.ts';
import { fmt, log } from '../lib/report.ts';
import { type BenchServer, startServer } from '../lib/server.ts';
import { createMonitor, subscribe } from '../lib/setup.ts';
import { nowMs, round, sleep } from '../lib/stats.ts';

/** Memory is read this long after the last request (then after a full collection): trims and timers settle. */
export const restMs = 2000;

/** Creation stops early when the machine has less than this free (other work shares it). */
const minFreeBytes = 1.5 * 2 ** 30;

type Kind = 'monitor' | 'subscription' | 'lease' | 'source';

interface KindSetup {
  /** Prepares the server; what it leaves in memory is part of the baseline. */
  prepare(request: Requester, count: number): Promise<(i: number) => Promise<unknown>>;
  noun: string;
  serverArgs?: string[];
}

const kinds: Record<Kind, KindSetup> = {
  monitor: {
    noun: 'monitors',
    prepare: async (request) => (i) => json(request, 'POST', '/monitors', { id: `m-${i}`, capabilities: ['observe'] }),
  },
  subscription: {
    noun: 'live subscriptions',
    async prepare(request) {
      const owner = await createMonitor(request, 'bench-memory');
      return (i) => subscribe(request, 'bench-memory', owner, `agent:bench-${i}`);
    },
  },
  lease: {
    noun: 'held leases',
    async prepare(request, count) {
      const owner = await createMonitor(request, 'bench-leases', ['observe', 'act']);
      for (let start = 0; start < count; start += 1000) {
        const observations = Array.from({ length: Math.min(1000, count - start) }, (_, j) => ({ type: 'bench.work', subject: `s${start + j}`, data: {} }));
        await json(request, 'POST', '/monitors/bench-leases/observations', { observations }, owner);
      }
      const worker = await subscribe(request, 'bench-leases', owner, 'agent:holder', { capabilities: ['observe', 'act'] });
      return (i) => json(request, 'POST', `/subscriptions/${worker.id}/leases/claim`, { subject: `s${i}`, lease_duration_seconds: 86400 }, worker.token);
    },
  },
  source: {
    noun: 'formula sources',
    async prepare(request) {
      const owner = await createMonitor(request, 'bench-input');
      return (i) =>
        json(request, 'POST', '/monitors', { id: `src-${i}`, source: { kind: 'formula', expression: 'bench_input.head', inputs: ['bench-input'], interval_s: 86400 } }, owner);
    },
    serverArgs: ['--sources', 'formula'],
  },
};

export interface KindMemory {
  kind: Kind;
  created: number;
  rssPerActor: number;
  heapPerActor: number;
  rss: number;
}

export async function memoryScenario(ctx: BenchContext): Promise<KindMemory[]> {
  const out: KindMemory[] = [];
  for (const kind of Object.keys(kinds) as Kind[]) out.push(await measureKind(ctx, kind));
  const monitor = out.find((k) => k.kind === 'monitor');
  const source = out.find((k) => k.kind === 'source');
  if (monitor && source) {
    ctx.report.note(`memory: a source actor alone (its monitor's share taken off) ≈ ${fmt(source.rssPerActor - monitor.rssPerActor)} bytes RSS, ${fmt(source.heapPerActor - monitor.heapPerActor)} bytes heap`);
  }
  return out;
}

async function measureKind(ctx: BenchContext, kind: Kind): Promise<KindMemory> {
  const count = ctx.size.actors;
  const setup = kinds[kind];
  const server = await startServer({ transport: 'uws', durable: true, nodeFlags: ctx.nodeFlags, args: setup.serverArgs ?? [] });
  try {
    const create = await setup.prepare(server.request, count);
    const m0 = await atRest(server, restMs);
    const t0 = nowMs();
    const created = await createMany(count, 16, create);
    log(`memory: ${fmt(created)} ${kind}s in ${round((nowMs() - t0) / 1000, 1)} s`);
    const m1 = await atRest(server, restMs);
    const rssPerActor = (m1.rss - m0.rss) / created;
    const heapPerActor = (m1.heapUsed - m0.heapUsed) / created;
    const scenario = '7 memory per actor';
    const countLabel = created < count ? `${fmt(created)} (stopped early: less than 1.5 GB free)` : fmt(created);
    ctx.report.add('uws', {
      scenario,
      figure: `RSS per actor, ${countLabel} ${setup.noun}`,
      value: rssPerActor,
      unit: 'bytes',
      baseline: { name: `RSS with none`, value: m0.rss / 2 ** 20, unit: 'MB' },
      ratio: round(m1.rss / m0.rss, 2),
    });
    ctx.report.add('uws', { scenario, figure: `JS heap per actor, ${countLabel} ${setup.noun}`, value: heapPerActor, unit: 'bytes' });
    if (kind === 'subscription') {
      ctx.report.add('uws', {
        scenario,
        figure: `server RSS with ${fmt(created)} live subscriptions`,
        value: m1.rss / 2 ** 20,
        unit: 'MB',
        baseline: { name: 'RSS with none', value: m0.rss / 2 ** 20, unit: 'MB' },
        ratio: round(m1.rss / m0.rss, 2),
        target: '< 400 MB at 100,000',
        met: created >= 100_000 ? m1.rss < 400 * 2 ** 20 : `${fmt(created)} created, not 100,000`,
      });
    }
    return { kind, created, rssPerActor, heapPerActor, rss: m1.rss };
  } finally {
    await server.stop();
  }
}

async function atRest(server: BenchServer, ms: number) {
  await sleep(ms);
  return server.liveMemory();
}

/** Runs `create(i)` for i < count with `parallel` in flight; stops early when the machine runs short of memory. */
async function createMany(count: number, parallel: number, create: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  let stop = false;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (!stop && next < count) {
        const i = next++;
        await create(i);
        if (i % 1000 === 0 && os.freemem() < minFreeBytes) stop = true;
      }
    }),
  );
  return next;
}
