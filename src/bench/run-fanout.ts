// `vigil bench fanout`, put together: subscriptions and streams opened by
// the stream threads, an open-loop publisher thread, the reconnect storm at
// its time, a drain until every stream has every event (or --drain runs
// out), and the threads' own judgement of what each stream lost or got twice.
import { cpuMeter } from './client-cpu.ts';
import { nowMs } from './clock.ts';
import { sleep } from '../timing/sleep.ts';
import { ms, num, rate } from './format.ts';
import { emptyHistogram, type Histogram, mergeInto } from './histogram.ts';
import type { RunHooks } from './outcome.ts';
import { BenchSetupError, head, subscribeMany, type Target, withTarget } from './setup.ts';
import { residentBytes } from './server-memory.ts';
import { endedEarly, SilenceWatch } from './silence-watch.ts';
import { LostStateWatch, lostStateText, notFoundCount } from './lost-state.ts';
import type { FanoutSpec } from './spec.ts';
import { type FanoutFigures, fanoutFigures } from './stream-figures.ts';
import { Arrivals, type Published, type StreamJudgement } from './stream-records.ts';
import type { StreamThreadData } from './stream-thread.ts';
import { startThreads } from './threads.ts';
import type { Wire } from './wire.ts';

export interface FanoutRun {
  figures: FanoutFigures;
  /** Deliveries and acknowledged publishes per quarter second. */
  deliverySeries: number[];
  publishSeries: number[];
  toFirst: number[];
  toLast: number[];
  publishLatency: Histogram;
  startMs: number;
}

/** npm run bench reads the server's memory here: once the subscriptions exist, and once the streams are open (before publishing). */
export interface FanoutHooks extends RunHooks {
  subscribed?: () => Promise<void>;
  opened?: () => Promise<void>;
}

export async function runFanout(spec: FanoutSpec, hooks: FanoutHooks = {}): Promise<FanoutRun> {
  const step = hooks.step ?? (() => {});
  return await withTarget(spec, 'fanout', ['observe'], 32, step, (wire, target) => measure(spec, hooks, wire, target, step));
}

async function measure(spec: FanoutSpec, hooks: FanoutHooks, wire: Wire, target: Target, step: (line: string) => void): Promise<FanoutRun> {
  const roots = spec.bases;
  step(`subscribing ${num(spec.subscriptions)} subscriptions on monitor ${target.monitor}`);
  const subs = await subscribeMany(wire, roots, target, spec.subscriptions, 'agent:bench-s', ['observe']);
  const startSeq = (await head(wire, roots[0]!, target)) + 1;
  await hooks.subscribed?.();
  const memoryBefore = spec.pid !== undefined ? residentBytes(spec.pid) : undefined;

  const threads = Math.max(1, Math.min(spec.threads, spec.streams));
  const data: StreamThreadData[] = Array.from({ length: threads }, () => ({ streams: [], startSeq, timeoutMs: spec.timeoutMs }));
  for (let i = 0; i < spec.streams; i++) {
    const root = new URL(roots[i % roots.length]!);
    const sub = subs[i % subs.length]!;
    data[i % threads]!.streams.push({
      index: i,
      host: root.hostname,
      port: Number(root.port || (root.protocol === 'https:' ? 443 : 80)),
      path: `${root.pathname}/subscriptions/${encodeURIComponent(sub.id)}/stream?cursor=${startSeq}`,
      token: sub.token,
      subscription: sub.id,
    });
  }
  if (roots.some((r) => r.startsWith('https:'))) throw new BenchSetupError('vigil bench fanout reads event streams over plain HTTP; --base https://… is not supported for fanout yet.');

  const arrivals = new Arrivals(startSeq);
  let opened = 0;
  const openFailures: Record<string, number> = {};
  let deliveries = 0;
  let duplicates = 0;
  const deliverySeries: number[] = [];
  const closes: Record<string, number> = {};
  const judged: StreamJudgement[] = [];
  const stormTimes: number[] = [];
  const busy: number[] = new Array(threads + 1).fill(0);
  const threadDeliveries = new Map<number, { deliveries: number; duplicates: number }>();
  step(`opening ${num(spec.streams)} event streams on ${threads} threads`);
  const streams = await startThreads('streams', data as unknown as Array<Record<string, unknown>>, (m) => {
    if (m.type === 'opened') {
      opened += m.opened as number;
      for (const [k, n] of Object.entries(m.reasons as Record<string, number>)) openFailures[k] = (openFailures[k] ?? 0) + n;
    } else if (m.type === 'batch') {
      threadDeliveries.set(m.thread, { deliveries: m.deliveries as number, duplicates: m.duplicates as number });
      deliveries = [...threadDeliveries.values()].reduce((a, t) => a + t.deliveries, 0);
      duplicates = [...threadDeliveries.values()].reduce((a, t) => a + t.duplicates, 0);
      for (const [i, n] of Object.entries(m.series as Record<number, number>)) add(deliverySeries, Number(i), n);
      for (const [k, n] of Object.entries(m.closes as Record<string, number>)) closes[k] = (closes[k] ?? 0) + n;
      for (const [seq, first, last, count] of m.seqs as Array<[number, number, number, number]>) arrivals.merge(seq, first, last, count);
      stormTimes.push(...(m.stormed as number[]));
    } else if (m.type === 'judged') judged.push(m as unknown as StreamJudgement);
    else if (m.type === 'done') busy[m.thread] = m.elu as number;
  });
  try {
    if (opened === 0) throw new BenchSetupError(`no event stream opened: ${Object.entries(openFailures).map(([k, n]) => `${k} ×${n}`).join(', ')}`);
    step(`${num(opened)} of ${num(spec.streams)} streams open${opened < spec.streams ? ` (${Object.entries(openFailures).map(([k, n]) => `${k} ×${n}`).join(', ')})` : ''}`);
    let memoryAfter: number | undefined;
    if (spec.pid !== undefined) {
      await sleep(1000, hooks.signal ?? new AbortController().signal);
      memoryAfter = residentBytes(spec.pid);
    }
    await hooks.opened?.();

    const published: Published[] = [];
    const publishLatency = emptyHistogram();
    const publishOutcomes: Record<string, number> = {};
    const publishSeries: number[] = [];
    let publishUnanswered = 0;
    let publisherDone = false;
    const publisher = await startThreads(
      'publish',
      [{ mode: 'open', monitor: target.monitor, ownerToken: target.ownerToken, size: spec.size, timeoutMs: spec.timeoutMs, roots, rate: spec.rate, events: spec.events, durationMs: spec.durationMs }],
      (m) => {
        if (m.type === 'batch') {
          published.push(...(m.published as Published[]));
          mergeInto(publishLatency, m.latency as Histogram);
          publishUnanswered += m.unanswered as number;
          for (const [k, n] of Object.entries(m.outcomes as Record<string, number>)) publishOutcomes[k] = (publishOutcomes[k] ?? 0) + n;
          for (const [i, n] of Object.entries(m.series as Record<number, number>)) add(publishSeries, Number(i), n);
        } else if (m.type === 'done') {
          busy[threads] = m.elu as number;
          publisherDone = true;
        }
      },
    );
    const cpu = cpuMeter();
    const runStart = nowMs();
    hooks.started?.();
    streams.go({ startMs: runStart });
    publisher.go({ startMs: runStart });
    step(`publishing ${spec.events !== undefined ? num(spec.events) : ''}${spec.events !== undefined ? ' events ' : ''}at ${num(spec.rate, 1)}/s${spec.durationMs !== undefined ? ` for up to ${spec.durationMs / 1000} s` : ''}${spec.stormAtMs !== undefined ? `; every stream reconnects at ${spec.stormAtMs / 1000} s` : ''}`);
    let stormAt: number | undefined;
    let interrupted = false;
    let drainStart: number | undefined;
    // A server that stops answering ends the run: its streams deliver nothing more, and the publisher would spin on refusals.
    const silence = new SilenceWatch(runStart);
    let silentSince: number | undefined;
    const lostState = new LostStateWatch();
    let lostAt: number | undefined;
    const acked = () => published.filter((p) => p.seq !== null);
    const complete = (p: Published) => arrivals.count[p.seq! - startSeq]! >= opened;
    await new Promise<void>((resolve) => {
      const ticker = setInterval(() => {
        const now = nowMs();
        if (hooks.signal?.aborted && !interrupted) {
          interrupted = true;
          publisher.stop();
        }
        if (silentSince === undefined) {
          silentSince = silence.silentSince(publishLatency.count - publishUnanswered, publishUnanswered, now);
          if (silentSince !== undefined) publisher.stop();
        }
        if (lostAt === undefined) {
          lostAt = lostState.lostAt(publishOutcomes, now);
          if (lostAt !== undefined) publisher.stop();
        }
        if (spec.stormAtMs !== undefined && stormAt === undefined && now - runStart >= spec.stormAtMs && !publisherDone) {
          stormAt = now;
          streams.post({ type: 'storm' });
        }
        if (hooks.progress) {
          const firsts = acked().map((p) => arrivals.first[p.seq! - startSeq]! - p.send).filter(Number.isFinite);
          firsts.sort((a, b) => a - b);
          const p99 = firsts.length ? firsts[Math.min(firsts.length - 1, Math.ceil(firsts.length * 0.99) - 1)] : Number.NaN;
          hooks.progress(
            `fanout ${((now - runStart) / 1000).toFixed(1)} s · ${num(published.length)} published · ${rate(deliveries / Math.max(0.001, (now - runStart) / 1000), 'deliveries/s')} · publish → first p99 ${ms(p99)} · ${duplicates === 0 ? 'no duplicate' : `${num(duplicates)} DUPLICATES`} so far${drainStart !== undefined ? ' · draining' : ''}`,
          );
        }
        if (!publisherDone) return;
        drainStart ??= now;
        const drainLimit = silentSince !== undefined || lostAt !== undefined ? 0 : interrupted ? Math.min(2000, spec.drainMs) : spec.drainMs;
        if (now - drainStart >= drainLimit || acked().every(complete)) {
          clearInterval(ticker);
          resolve();
        }
      }, 250);
    });
    hooks.stopped?.();
    await publisher.finished(spec.timeoutMs + 5000);
    const endMs = nowMs();
    const ackedList = acked().map((p) => [p.seq!, p.send] as [number, number]);
    streams.post({ type: 'judge', published: ackedList, stormAt });
    await streams.finished(30_000);
    if (streams.failures.length + publisher.failures.length > 0) throw new Error(`a bench thread failed: ${[...streams.failures, ...publisher.failures].join('; ')}`);
    const toFirst: number[] = [];
    const toLast: number[] = [];
    for (const p of acked()) {
      const i = p.seq! - startSeq;
      if (Number.isFinite(arrivals.first[i]!)) toFirst.push(arrivals.first[i]! - p.send);
      if (complete(p)) toLast.push(arrivals.last[i]! - p.send);
    }
    const lastArrival = Math.max(runStart, ...acked().map((p) => arrivals.last[p.seq! - startSeq]!).filter((t) => t > 0));
    const figures = fanoutFigures({
      spec,
      servers: [...target.servers],
      monitor: target.monitor,
      startMs: runStart,
      endMs,
      interrupted,
      opened,
      openFailures,
      published,
      publishOutcomes,
      publishLatency,
      deliveries,
      deliverySpanSeconds: Math.max(0.001, (lastArrival - runStart) / 1000),
      toFirst,
      toLast,
      judged,
      stormAt: stormAt === undefined ? undefined : stormAt - runStart,
      stormTimes,
      closes,
      endedEarly: silentSince === undefined ? undefined : endedEarly(endMs - runStart, silentSince - runStart),
      lostState: lostAt === undefined ? undefined : lostStateText(lostAt - runStart, notFoundCount(publishOutcomes)),
      memory: memoryBefore !== undefined && memoryAfter !== undefined ? { pid: spec.pid!, before: memoryBefore, after: memoryAfter } : undefined,
      client: cpu.stop(busy),
    });
    return { figures, deliverySeries, publishSeries, toFirst, toLast, publishLatency, startMs: runStart };
  } finally {
    await streams.terminate();
  }
}

function add(series: number[], i: number, n: number): void {
  while (series.length <= i) series.push(0);
  series[i]! += n;
}

