// A worker thread of `vigil bench leases`: runs its share of the clients on
// one undici agent, and every 250 ms hands the main thread the holds that
// ended, the latency histograms and the outcome counts since the last time.
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { nowMs } from './clock.ts';
import { type Histogram, histogramOf, record } from './histogram.ts';
import { type ClientContext, LeaseClient } from './lease-client.ts';
import { type Hold, type LeaseBatch, type NodeTally, nodeTally, type OpRecord, seriesStepMs, type ThreadDone } from './lease-records.ts';
import { sampler } from './random.ts';
import type { Subscription } from './setup.ts';
import type { LeaseSpec } from './spec.ts';
import { readyThenGo, slot, stopSignal } from './threads.ts';
import { Wire } from './wire.ts';

export interface LeaseThreadData {
  spec: LeaseSpec;
  /** This thread's clients: their number, node and subscription. */
  clients: Array<{ index: number; root: string; node: number; sub: Subscription }>;
  monitor: string;
  ownerToken: string;
  fence: boolean;
}

const data = workerData as LeaseThreadData & { thread: number; counters: Int32Array };
const { spec, counters, thread } = data;
const port = parentPort!;

/** The label a request is counted under: a take-next claim and a complete-and-next apart from the plain ones. */
export const opLabel = (r: OpRecord): string => (r.next ? `${r.op}+next` : r.op === 'claim' && spec.mode === 'next' ? 'claim next' : r.op);

let latency: Record<string, Histogram> = {};
let outcomes: Record<string, number> = {};
let refusedSeries: Record<number, number> = {};
let requestSeries: Record<number, number> = {};
let nodes: Record<number, NodeTally> = {};
let finished: Hold[] = [];
const holding = new Set<Hold>();

const stop = stopSignal(counters);
const ctx: ClientContext = {
  wire: new Wire(Math.max(1, data.clients.length), spec.timeoutMs),
  spec,
  monitor: data.monitor,
  ownerToken: data.ownerToken,
  fence: data.fence,
  sampler: spec.mode === 'named' ? sampler(spec.skew, spec.subjects) : undefined,
  stop,
  ended(op) {
    const ended = Atomics.add(counters, slot.ended, 1) + 1;
    if (op === 'complete') Atomics.add(counters, slot.completed, 1);
    if (spec.cycles !== undefined && ended >= spec.cycles) Atomics.store(counters, slot.stop, 1);
  },
  drained: () => {
    const done = Atomics.load(counters, slot.completed) >= spec.subjects;
    if (done) Atomics.store(counters, slot.stop, 1);
    return done;
  },
  note(r, node) {
    const label = opLabel(r);
    const n = nodeTally(nodes, node);
    record(n.latency, r.answer - r.send);
    if (r.status === 0) n.unanswered++;
    else if (r.status >= 300) n.refused++;
    record(histogramOf(latency, label), r.answer - r.send);
    const key = `${label} ${r.status >= 200 && r.status < 300 ? 'ok' : (r.code ?? `HTTP_${r.status}`)}`;
    outcomes[key] = (outcomes[key] ?? 0) + 1;
    const step = Math.floor((r.answer - startMs) / seriesStepMs);
    requestSeries[step] = (requestSeries[step] ?? 0) + 1;
    if (r.status < 200 || r.status >= 300) refusedSeries[step] = (refusedSeries[step] ?? 0) + 1;
  },
  finished: (hold) => {
    finished.push(hold);
  },
  holding,
};

function flush(): void {
  let low = nowMs();
  for (const h of holding) low = Math.min(low, h.grant.answer);
  const batch: LeaseBatch = { type: 'batch', thread, holds: finished, low, latency, outcomes, refusedSeries, requestSeries, nodes };
  port.postMessage(batch);
  finished = [];
  latency = {};
  outcomes = {};
  refusedSeries = {};
  requestSeries = {};
  nodes = {};
}

// The run's start (ms, for the series) comes with "go".
const { startMs } = await readyThenGo<{ type: 'go'; startMs: number }>(port, thread);
const elu0 = performance.eventLoopUtilization();
const flusher = setInterval(flush, 250);
await Promise.all(data.clients.map((c) => new LeaseClient(ctx, c.index, c.root, c.node, c.sub).run()));
clearInterval(flusher);
flush();
const done: ThreadDone = { type: 'done', thread, elu: performance.eventLoopUtilization(elu0).utilization };
port.postMessage(done);
await ctx.wire.close();
port.close();
