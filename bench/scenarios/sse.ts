// 3 SSE fan-out: 10,000 open streams on one monitor, 100 observations
// published open loop, publish → delivery on the last stream measured by
// separate reader processes (bench/clients/sse.ts).
import { type LoadChild, startChild } from '../lib/children.ts';
import type { BenchContext } from '../lib/context.ts';
import { restMs } from './memory.ts';
import { client, json } from '../lib/http.ts';
import { fmt, log, type Transport } from '../lib/report.ts';
import { startServer } from '../lib/server.ts';
import { createMonitor, head, subscribeMany } from '../lib/setup.ts';
import { nowMs, round, sleep, summary } from '../lib/stats.ts';

const readerProcesses = 4;

interface SseResult {
  opened: number;
  failures: number;
  deliveries: number;
  complete: number;
  lastArrival: number;
  worst: Array<[number, number]>;
  lastStream: number[];
  reads: number;
  cpuSeconds: number;
}

/** What the same reader processes saw of one open-loop burst of publishes. */
export interface FanOut {
  opened: number;
  complete: number;
  deliveries: number;
  reads: number;
  readerCpu: number;
  /** publish → the last stream's delivery, per observation */
  latest: ReturnType<typeof summary>;
  /** publish → its acknowledgement */
  acknowledged: ReturnType<typeof summary>;
  spanS: number;
}

/**
 * Opens `streams` with the reader processes at `base`, waits until they are
 * open (then calls `opened`), and publishes `events` observations open loop,
 * one every 10 ms, through `publish`. Vigil and the bare broadcaster are
 * measured by this same code.
 */
export async function fanOut(
  base: string,
  streams: ReadonlyArray<{ id: string; token: string }>,
  cursor: number,
  events: number,
  publish: (data: { sent: number; i: number }) => Promise<unknown>,
  opened: () => Promise<void>,
): Promise<FanOut> {
  const per = Math.ceil(streams.length / readerProcesses);
  const children: Array<LoadChild<SseResult>> = Array.from({ length: readerProcesses }, (_, i) =>
    startChild<SseResult>('sse', { base, streams: streams.slice(i * per, (i + 1) * per), cursor, expected: events, timeoutMs: 60_000 }),
  );
  await Promise.race([Promise.all(children.map((c) => c.ready)), Promise.all(children.map((c) => c.result))]);
  await opened();
  for (const c of children) c.go();
  await sleep(300);
  const first = nowMs();
  const published: Array<Promise<number>> = [];
  for (let i = 0; i < events; i++) {
    const wait = first + i * 10 - nowMs();
    if (wait > 0) await sleep(wait);
    const sent = nowMs();
    published.push(publish({ sent, i }).then(() => nowMs() - sent));
  }
  const acknowledged = summary(await Promise.all(published));
  const results = await Promise.all(children.map((c) => c.result));
  const total = (k: 'opened' | 'deliveries' | 'complete' | 'reads' | 'cpuSeconds') => results.reduce((a, r) => a + r[k], 0);
  const worst = new Map<number, number>();
  for (const r of results) for (const [sent, l] of r.worst) worst.set(sent, Math.max(worst.get(sent) ?? 0, l));
  const lastArrival = Math.max(...results.map((r) => r.lastArrival));
  return {
    opened: total('opened'),
    complete: total('complete'),
    deliveries: total('deliveries'),
    reads: total('reads'),
    readerCpu: total('cpuSeconds'),
    latest: summary([...worst.values()]),
    acknowledged,
    spanS: (lastArrival - first) / 1000,
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
    const owner = await createMonitor(server.request, 'bench-sse');
    const subs = await subscribeMany(server.request, 'bench-sse', owner, size.streams, 16);
    const cursor = (await head(server.request, 'bench-sse', owner)) + 1;
    await sleep(restMs);
    const m0 = await server.liveMemory();
    let m1 = m0;
    let cpu0 = 0;
    const publisher = client(server.base, 16);
    const run = await fanOut(
      server.base,
      subs,
      cursor,
      size.events,
      (data) => json(publisher, 'POST', '/monitors/bench-sse/observations', { type: 'bench.fanout', subject: 'f', data }, owner),
      async () => {
        // Live memory: right after 10,000 opening requests the heap still holds their garbage.
        await sleep(restMs);
        m1 = await server.liveMemory();
        log(`SSE ${transport}: heap ${round(m0.heapUsed / 2 ** 20)} → ${round(m1.heapUsed / 2 ** 20)} MB, resident subscription actors ${m0.residentSubscriptions} → ${m1.residentSubscriptions}`);
        cpu0 = server.cpuSeconds();
      },
    );
    const serverCpu = server.cpuSeconds() - cpu0;
    const { opened, deliveries, latest, acknowledged } = run;
    const perStream = (m1.rss - m0.rss) / Math.max(1, opened);
    const scenario = '3 SSE';
    log(`SSE ${transport}: ${opened} streams open, ${run.complete} received all ${size.events}, ${deliveries} deliveries in ${run.reads} reads`);
    if (run.complete < opened) report.note(`SSE ${transport}: only ${run.complete} of ${opened} streams received all ${size.events} observations within 60 s`);
    if (opened < size.streams) report.note(`SSE ${transport}: ${opened} of ${size.streams} streams opened`);
    const yardstick = (p: 'p50' | 'p99') => ({ name: `the publish acknowledged, ${p}`, value: acknowledged[p], unit: 'ms' });
    report.add(transport, { scenario, figure: `publish → last stream's delivery, p50 (${fmt(size.streams)} streams)`, value: latest.p50, unit: 'ms', baseline: yardstick('p50'), ratio: round(latest.p50 / acknowledged.p50, 1) });
    report.add(transport, { scenario, figure: `publish → last stream's delivery, p99`, value: latest.p99, unit: 'ms', baseline: yardstick('p99'), ratio: round(latest.p99 / acknowledged.p99, 1), target: 'p99 < 250 ms', met: latest.p99 < 250 });
    report.add(transport, { scenario, figure: 'deliveries per second', value: deliveries / run.spanS, unit: 'deliveries/s' });
    report.add(transport, { scenario, figure: 'server CPU per delivery', value: (serverCpu * 1e6) / Math.max(1, deliveries), unit: 'µs' });
    // The readers share the server's two cores: what they spend is CPU the server could not have.
    report.add(transport, { scenario, figure: "reader processes' CPU per delivery", value: (run.readerCpu * 1e6) / Math.max(1, deliveries), unit: 'µs' });
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
