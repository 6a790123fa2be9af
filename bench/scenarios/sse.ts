// 3 SSE fan-out: 10,000 open streams on one monitor, 100 observations
// published open loop, publish → delivery on the last stream measured by
// `vigil bench fanout` (the engine users run, src/bench: reader threads on
// raw sockets, an open-loop publisher thread).
import type { BenchContext } from '../lib/context.ts';
import { restMs } from './memory.ts';
import { fmt, log, type Transport } from '../lib/report.ts';
import { startServer } from '../lib/server.ts';
import { round, sleep } from '../lib/stats.ts';
import { runFanout } from '../../src/bench/run-fanout.ts';
import type { FanoutSpec } from '../../src/bench/spec.ts';
import type { Percentiles } from '../../src/bench/histogram.ts';

/** What `vigil bench fanout` saw of one open-loop burst of publishes. */
export interface FanOut {
  opened: number;
  deliveries: number;
  /** Events lost or delivered twice on some stream (the engine's judgement from its readers' records). */
  violations: number;
  /** The bench process's CPU (readers and publisher) from the release of the clients to the end. */
  clientCpu: number;
  /** publish → the last stream's delivery, per observation */
  latest: Percentiles;
  /** publish → its acknowledgement */
  acknowledged: Percentiles;
  deliveriesPerSecond: number;
}

/**
 * Runs `vigil bench fanout` against `base`: `streams` streams (one subscription each) opened by four
 * reader threads, then `events` observations published open loop, one every 10 ms. `subscribed` runs
 * once the subscriptions exist, `opened` once every stream is open (both before publishing), `started`
 * and `stopped` around the load. Vigil and the bare broadcaster are measured by this same code.
 */
export async function fanOut(
  base: string,
  streams: number,
  events: number,
  hooks: { subscribed?: () => Promise<void>; opened?: () => Promise<void>; started?: () => void; stopped?: () => void },
): Promise<FanOut> {
  const spec: FanoutSpec = {
    kind: 'fanout',
    bases: [base],
    keep: true,
    threads: 4,
    timeoutMs: 30_000,
    seed: 3,
    streams,
    subscriptions: streams,
    rate: 100,
    size: 32,
    durationMs: undefined,
    events,
    stormAtMs: undefined,
    drainMs: 60_000,
    pid: undefined,
  };
  const run = await runFanout(spec, hooks);
  const f = run.figures;
  return {
    opened: f.streams.opened,
    deliveries: f.deliveries.total,
    violations: f.lost.before + f.lost.after + f.duplicated.before + f.duplicated.after,
    clientCpu: f.client.cpuSeconds,
    latest: f.toLast,
    acknowledged: f.publishes.latency,
    deliveriesPerSecond: f.deliveries.perSecond,
  };
}

/** Vigil's p99 publish → last delivery and RSS per open stream, for the yardstick rows. */
export interface SseFigures {
  p99: number;
  perStreamKB: number;
}

export async function sseScenario(ctx: BenchContext, transport: Transport): Promise<SseFigures> {
  const { report, size } = ctx;
  const server = await startServer({ transport, durable: true, nodeFlags: ctx.nodeFlags });
  try {
    let m0 = { rss: 0, heapUsed: 0, residentSubscriptions: 0 };
    let m1 = m0;
    let cpu0 = 0;
    let serverCpu = 0;
    const run = await fanOut(server.base, size.streams, size.events, {
      subscribed: async () => {
        await sleep(restMs);
        m0 = await server.liveMemory();
      },
      opened: async () => {
        // Live memory: right after 10,000 opening requests the heap still holds their garbage.
        await sleep(restMs);
        m1 = await server.liveMemory();
        log(`SSE ${transport}: heap ${round(m0.heapUsed / 2 ** 20)} → ${round(m1.heapUsed / 2 ** 20)} MB, resident subscription actors ${m0.residentSubscriptions} → ${m1.residentSubscriptions}`);
      },
      started: () => {
        cpu0 = server.cpuSeconds();
      },
      stopped: () => {
        serverCpu = server.cpuSeconds() - cpu0;
      },
    });
    const { opened, deliveries, latest, acknowledged } = run;
    const perStream = (m1.rss - m0.rss) / Math.max(1, opened);
    const scenario = '3 SSE';
    log(`SSE ${transport}: ${opened} streams open, ${deliveries} deliveries, ${run.violations} lost or duplicated`);
    if (run.violations > 0) report.note(`SSE ${transport}: ${run.violations} events lost or delivered twice (vigil bench fanout's judgement)`);
    if (opened < size.streams) report.note(`SSE ${transport}: ${opened} of ${size.streams} streams opened`);
    const yardstick = (p: 'p50' | 'p99') => ({ name: `the publish acknowledged, ${p}`, value: acknowledged[p], unit: 'ms' });
    report.add(transport, { scenario, figure: `publish → last stream's delivery, p50 (${fmt(size.streams)} streams)`, value: latest.p50, unit: 'ms', baseline: yardstick('p50'), ratio: round(latest.p50 / acknowledged.p50, 1) });
    report.add(transport, { scenario, figure: `publish → last stream's delivery, p99`, value: latest.p99, unit: 'ms', baseline: yardstick('p99'), ratio: round(latest.p99 / acknowledged.p99, 1), target: 'p99 < 250 ms', met: latest.p99 < 250 });
    report.add(transport, { scenario, figure: 'deliveries per second', value: run.deliveriesPerSecond, unit: 'deliveries/s' });
    report.add(transport, { scenario, figure: "events lost or duplicated, judged from the readers' records (vigil bench fanout)", value: run.violations, unit: 'events', target: '0', met: run.violations === 0 && deliveries > 0 });
    report.add(transport, { scenario, figure: 'server CPU per delivery', value: (serverCpu * 1e6) / Math.max(1, deliveries), unit: 'µs' });
    // The readers share the server's two cores: what they spend is CPU the server could not have.
    report.add(transport, { scenario, figure: "bench readers' and publisher's CPU per delivery", value: (run.clientCpu * 1e6) / Math.max(1, deliveries), unit: 'µs' });
    report.add(transport, {
      scenario,
      figure: 'server memory per open stream (RSS delta / streams)',
      value: perStream / 1024,
      unit: 'KB',
      baseline: { name: 'RSS before the streams opened', value: m0.rss / 2 ** 20, unit: 'MB' },
      ratio: round(m1.rss / m0.rss, 2),
      target: '< 4 KB per stream',
      met: perStream < 4096,
    });
    report.add(transport, { scenario, figure: 'server JS heap per open stream', value: (m1.heapUsed - m0.heapUsed) / Math.max(1, opened) / 1024, unit: 'KB' });
    return { p99: latest.p99, perStreamKB: perStream / 1024 };
  } finally {
    await server.stop();
  }
}
