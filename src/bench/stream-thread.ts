// A worker thread of `vigil bench fanout`: opens its share of the event
// streams, writes down when each event arrives on each stream (and how many
// times), reconnects a stream the server ends with Last-Event-ID, and on the
// main thread's word closes and reopens every stream at once (the reconnect
// storm). At the end it judges, from its own records, which published events
// each stream lost or got twice.
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { nowMs } from './clock.ts';
import { seriesStepMs } from './lease-records.ts';
import { SseStream } from './sse-reader.ts';
import { Arrivals, type StreamJudgement, type StreamOffence } from './stream-records.ts';
import { readyThenGo, stopSignal } from './threads.ts';

export interface StreamThreadData {
  streams: Array<{ index: number; host: string; port: number; path: string; token: string; subscription: string }>;
  /** The first seq the streams can deliver (the head when they opened, plus one). */
  startSeq: number;
  /** A stream whose answer has not begun by then is given up and opened again. */
  timeoutMs: number;
}

const data = workerData as StreamThreadData & { thread: number; counters: Int32Array };
const port = parentPort!;
const stop = stopSignal(data.counters);
const arrivals = new Arrivals(data.startSeq);
/** Deliveries per seq since the last flush (the main thread adds them up). */
const touched = new Map<number, number>();
let deliveries = 0;
let duplicates = 0;
let startMs = nowMs();
let series: Record<number, number> = {};
/** Closes by the server (or refused reopenings), with their reasons. */
const closes: Record<string, number> = {};
let finishing = false;

interface Reader {
  stream: SseStream;
  /** Its stream is open now (not refused, cut, or away in a reconnect). */
  open: boolean;
  received: Uint8Array;
  /** When the storm closed it, until it is open again. */
  stormedAt: number | undefined;
  settle: (() => void) | undefined;
}

const readers: Reader[] = data.streams.map((s) => {
  const reader: Reader = { stream: undefined as never, open: false, received: new Uint8Array(256), stormedAt: undefined, settle: undefined };
  reader.stream = new SseStream(s, {
    opened(at) {
      reader.open = true;
      if (reader.stormedAt !== undefined) {
        stormTimes.push(at - reader.stormedAt);
        reader.stormedAt = undefined;
      }
      reader.settle?.();
      reader.settle = undefined;
    },
    event(id, at) {
      const seq = Number(id);
      if (!Number.isSafeInteger(seq)) return;
      const i = seq - data.startSeq;
      if (i < 0) return;
      if (i >= reader.received.length) {
        let n = reader.received.length;
        while (n <= i) n *= 2;
        const grown = new Uint8Array(n);
        grown.set(reader.received);
        reader.received = grown;
      }
      if (reader.received[i]! > 0) duplicates++;
      if (reader.received[i]! < 255) reader.received[i]!++;
      deliveries++;
      arrivals.record(seq, at);
      touched.set(seq, (touched.get(seq) ?? 0) + 1);
      const step = Math.floor((at - startMs) / seriesStepMs);
      series[step] = (series[step] ?? 0) + 1;
    },
    closed(reason, status) {
      reader.open = false;
      reader.settle?.();
      reader.settle = undefined;
      if (finishing) return;
      closes[reason] = (closes[reason] ?? 0) + 1;
      // As EventSource does: come back after the server's `retry:` time (a little spread, so that
      // streams cut together do not all return in the same millisecond) and resume after the last event.
      const wait = Math.max(status >= 400 ? 1000 : 0, reader.stream.retryMs) * (1 + Math.random() * 0.1);
      setTimeout(() => {
        if (!finishing) reader.stream.open(reader.stream.lastId, data.timeoutMs);
      }, wait).unref();
    },
  });
  return reader;
});
const stormTimes: number[] = [];

function openAll(list: Reader[], lastIds: boolean): Promise<void> {
  return Promise.all(
    list.map(
      (r) =>
        new Promise<void>((resolve) => {
          r.settle = resolve;
          r.stream.open(lastIds ? r.stream.lastId : undefined, data.timeoutMs);
        }),
    ),
  ).then(() => {});
}

// Open in waves, so that the server's accept queue is not flooded; the storm later opens all at once.
for (let i = 0; i < readers.length && !stop.aborted; i += 100) await openAll(readers.slice(i, i + 100), false);
const failedToOpen = Object.values(closes).reduce((a, b) => a + b, 0);
port.postMessage({ type: 'opened', thread: data.thread, opened: readers.length - failedToOpen, reasons: { ...closes } });
for (const key of Object.keys(closes)) delete closes[key];

function flush(): void {
  const seqs = [...touched].map(([seq, delivered]) => {
    const i = seq - arrivals.base;
    return [seq, arrivals.first[i]!, arrivals.last[i]!, delivered];
  });
  touched.clear();
  port.postMessage({ type: 'batch', thread: data.thread, deliveries, duplicates, series, closes: { ...closes }, seqs, stormed: stormTimes.splice(0) });
  series = {};
  for (const key of Object.keys(closes)) delete closes[key];
}

/**
 * Each acknowledged event on each stream exactly once. An event that never arrived while a later one
 * did was skipped (lost); one after the last that arrived was not delivered by the end (the stream was
 * behind, or not back from a reconnect): that is told apart, not counted as lost.
 */
function judge(published: Array<[number, number]>, stormAt: number | undefined): StreamJudgement {
  const lost = { before: 0, after: 0 };
  const duplicated = { before: 0, after: 0 };
  const undelivered = { open: 0, away: 0, streamsAway: 0 };
  const offences: StreamOffence[] = [];
  for (const [k, r] of readers.entries()) {
    let last = -1;
    for (let i = r.received.length - 1; i >= 0; i--) {
      if (r.received[i]! > 0) {
        last = i;
        break;
      }
    }
    if (!r.open) undelivered.streamsAway++;
    for (const [seq, sent] of published) {
      const i = seq - data.startSeq;
      const times = i >= 0 && i < r.received.length ? r.received[i]! : 0;
      if (times === 1) continue;
      if (times === 0 && i > last) {
        if (r.open) undelivered.open++;
        else undelivered.away++;
        continue;
      }
      const phase = stormAt !== undefined && sent >= stormAt ? 'after' : 'before';
      if (times === 0) lost[phase]++;
      else duplicated[phase] += times - 1;
      if (offences.length < 20) offences.push({ kind: times === 0 ? 'lost' : 'duplicated', stream: data.streams[k]!.index, subscription: data.streams[k]!.subscription, seq, times, phase });
    }
  }
  return { type: 'judged', thread: data.thread, lost, duplicated, undelivered, offences };
}

const go = await readyThenGo<{ type: 'go'; startMs: number }>(port, data.thread);
startMs = go.startMs;
const elu0 = performance.eventLoopUtilization();
const flusher = setInterval(flush, 250);
await new Promise<void>((resolve) => {
  port.on('message', (m: { type: string; published?: Array<[number, number]>; stormAt?: number }) => {
    if (m.type === 'storm') {
      const at = nowMs();
      for (const r of readers) {
        r.stormedAt = at;
        r.open = false;
        r.stream.close();
      }
      void openAll(readers, true);
    } else if (m.type === 'judge') {
      finishing = true;
      clearInterval(flusher);
      flush();
      port.postMessage(judge(m.published!, m.stormAt));
      resolve();
    }
  });
});
for (const r of readers) r.stream.close();
port.postMessage({ type: 'done', thread: data.thread, elu: performance.eventLoopUtilization(elu0).utilization });
port.close();
