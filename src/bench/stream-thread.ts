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
}

const data = workerData as StreamThreadData & { thread: number; counters: Int32Array };
const port = parentPort!;
const stop = stopSignal(data.counters);
const arrivals = new Arrivals(data.startSeq);
const touched = new Set<number>();
let deliveries = 0;
let duplicates = 0;
let startMs = nowMs();
let series: Record<number, number> = {};
/** Closes by the server (or refused reopenings), with their reasons. */
const closes: Record<string, number> = {};
let finishing = false;

interface Reader {
  stream: SseStream;
  received: Uint8Array;
  /** When the storm closed it, until it is open again. */
  stormedAt: number | undefined;
  settle: (() => void) | undefined;
}

const readers: Reader[] = data.streams.map((s) => {
  const reader: Reader = { stream: undefined as never, received: new Uint8Array(256), stormedAt: undefined, settle: undefined };
  reader.stream = new SseStream(s, {
    opened(at) {
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
      touched.add(seq);
      const step = Math.floor((at - startMs) / seriesStepMs);
      series[step] = (series[step] ?? 0) + 1;
    },
    closed(reason, status) {
      reader.settle?.();
      reader.settle = undefined;
      if (finishing) return;
      closes[reason] = (closes[reason] ?? 0) + 1;
      // As a client does: come back after a moment and resume after the last event received.
      const wait = status >= 400 ? 1000 : 250;
      setTimeout(() => {
        if (!finishing) reader.stream.open(reader.stream.lastId);
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
          r.stream.open(lastIds ? r.stream.lastId : undefined);
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
  const seqs = [...touched].map((seq) => {
    const i = seq - arrivals.base;
    return [seq, arrivals.first[i]!, arrivals.last[i]!, arrivals.count[i]!];
  });
  touched.clear();
  port.postMessage({ type: 'batch', thread: data.thread, deliveries, duplicates, series, closes: { ...closes }, seqs });
  series = {};
}

function judge(published: Array<[number, number]>, stormAt: number | undefined): StreamJudgement {
  const lost = { before: 0, after: 0 };
  const duplicated = { before: 0, after: 0 };
  const offences: StreamOffence[] = [];
  for (const [k, r] of readers.entries()) {
    for (const [seq, sent] of published) {
      const i = seq - data.startSeq;
      const times = i >= 0 && i < r.received.length ? r.received[i]! : 0;
      if (times === 1) continue;
      const phase = stormAt !== undefined && sent >= stormAt ? 'after' : 'before';
      if (times === 0) lost[phase]++;
      else duplicated[phase] += times - 1;
      if (offences.length < 20) offences.push({ kind: times === 0 ? 'lost' : 'duplicated', stream: data.streams[k]!.index, subscription: data.streams[k]!.subscription, seq, times, phase });
    }
  }
  return { type: 'judged', thread: data.thread, lost, duplicated, offences };
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
        r.stream.close();
      }
      void openAll(readers, true).then(() => port.postMessage({ type: 'stormed', thread: data.thread, times: stormTimes.splice(0) }));
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
