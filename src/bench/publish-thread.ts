// A worker thread that publishes observations, in one of two shapes:
//   open   — the fan-out publisher: one publish every 1/rate s whatever the
//            answers (open loop), each written down with its seq;
//   closed — `vigil bench publish`: each connection sends its next publish
//            when the previous one is answered.
// Every publish carries `size` bytes of data.
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { nowMs } from './clock.ts';
import { sleep } from '../timing/sleep.ts';
import { emptyHistogram, type Histogram, record } from './histogram.ts';
import { seriesStepMs } from './lease-records.ts';
import type { Published } from './stream-records.ts';
import { readyThenGo, stopSignal } from './threads.ts';
import { Wire } from './wire.ts';

export interface PublishThreadData {
  mode: 'open' | 'closed';
  monitor: string;
  ownerToken: string;
  size: number;
  timeoutMs: number;
  /** closed: one protocol root per connection of this thread; open: the roots to publish to in turn. */
  roots: string[];
  /** open: publishes per second, and when to stop. */
  rate?: number;
  events?: number;
  durationMs?: number;
}

const data = workerData as PublishThreadData & { thread: number; counters: Int32Array };
const port = parentPort!;
const stop = stopSignal(data.counters);
const wire = new Wire(data.mode === 'open' ? 64 : Math.max(1, data.roots.length), data.timeoutMs);
const pad = 'x'.repeat(data.size);
const path = `/monitors/${encodeURIComponent(data.monitor)}/observations`;

let published: Published[] = [];
let latency: Histogram = emptyHistogram();
let outcomes: Record<string, number> = {};
let series: Record<number, number> = {};
let seqs: number[] = [];
/** Publishes that got no answer at all (refused connection, reset, timeout) since the last flush. */
let unanswered = 0;

async function publish(root: string, i: number, startMs: number): Promise<void> {
  const send = nowMs();
  const reply = await wire.request(root, 'POST', path, { type: 'bench.publish', subject: `p${i % 100}`, data: { i, pad } }, data.ownerToken);
  const answer = nowMs();
  const seq = reply.status === 201 && Number.isSafeInteger(Number(reply.body?.seq)) ? Number(reply.body.seq) : null;
  record(latency, answer - send);
  const key = reply.status === 201 ? 'ok' : (reply.code ?? `HTTP_${reply.status}`);
  outcomes[key] = (outcomes[key] ?? 0) + 1;
  if (reply.status === 0) unanswered++;
  if (reply.status === 201) {
    const step = Math.floor((answer - startMs) / seriesStepMs);
    series[step] = (series[step] ?? 0) + 1;
  }
  if (data.mode === 'open') {
    const p: Published = { seq, send, answer, status: reply.status };
    if (reply.code !== undefined) p.code = reply.code;
    published.push(p);
  } else if (seq !== null) seqs.push(seq);
}

function flush(): void {
  port.postMessage({ type: 'batch', thread: data.thread, published, latency, outcomes, series, seqs, unanswered });
  unanswered = 0;
  published = [];
  latency = emptyHistogram();
  outcomes = {};
  series = {};
  seqs = [];
}

async function openLoop(startMs: number): Promise<void> {
  const interval = 1000 / data.rate!;
  const inFlight = new Set<Promise<void>>();
  for (let i = 0; ; i++) {
    if (stop.aborted || (data.events !== undefined && i >= data.events)) break;
    const due = startMs + i * interval;
    if (data.durationMs !== undefined && due - startMs >= data.durationMs) break;
    await sleep(due - nowMs(), stop);
    if (stop.aborted) break;
    // Past this many unanswered publishes the server is not keeping up: wait for one (the rate falls, and says so).
    if (inFlight.size >= 512) await Promise.race(inFlight);
    const p = publish(data.roots[i % data.roots.length]!, i, startMs).finally(() => inFlight.delete(p));
    inFlight.add(p);
  }
  await Promise.all(inFlight);
}

async function closedLoop(startMs: number): Promise<void> {
  let n = 0;
  await Promise.all(
    data.roots.map(async (root) => {
      while (!stop.aborted) await publish(root, n++, startMs);
    }),
  );
}

const { startMs } = await readyThenGo<{ type: 'go'; startMs: number }>(port, data.thread);
const elu0 = performance.eventLoopUtilization();
const flusher = setInterval(flush, 250);
await (data.mode === 'open' ? openLoop(startMs) : closedLoop(startMs));
clearInterval(flusher);
flush();
port.postMessage({ type: 'done', thread: data.thread, elu: performance.eventLoopUtilization(elu0).utilization });
await wire.close();
port.close();
