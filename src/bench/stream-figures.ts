// The figures of a fan-out run, its summary, and its headline figures for
// --compare. Lost and duplicated events are counted by the stream threads
// from their own records: every acknowledged publish must reach every open
// stream exactly once, before the reconnect storm and after it.
import type { ClientCpu } from './client-cpu.ts';
import { ms, num, plural, rate, table } from './format.ts';
import { type Histogram, type Percentiles, percentiles } from './histogram.ts';
import type { RunHeader, ServerFacts } from './setup.ts';
import { type FanoutSpec, showMs } from './spec.ts';
import type { Published, StreamJudgement, StreamOffence } from './stream-records.ts';

export interface FanoutFigures extends RunHeader {
  scenario: 'fanout';
  streams: { asked: number; opened: number; refused: Record<string, number> };
  publishes: { sent: number; acknowledged: number; perSecond: number; refused: Record<string, number>; latency: Percentiles };
  deliveries: { total: number; perSecond: number };
  /** Publish sent → first and → last stream's delivery, over events (last: events every stream got). */
  toFirst: Percentiles;
  toLast: Percentiles;
  /** Events a stream skipped: a later event arrived on it, this one never did. */
  lost: { before: number; after: number };
  duplicated: { before: number; after: number };
  /** Events after a stream's last one when the run ended: on open streams (behind), and on streams not back from a reconnect. */
  undelivered: { open: number; away: number; streamsAway: number };
  storm: { atSeconds: number; reconnected: number; reconnect: Percentiles } | undefined;
  /** Streams the server ended (the client came back with Last-Event-ID), by reason. */
  serverClosed: Record<string, number>;
  serverMemory: { pid: number; beforeMB: number; afterMB: number; perStreamKB: number } | undefined;
  offences: StreamOffence[];
  client: ClientCpu;
  warnings: string[];
}

export interface FanoutFigureInput {
  spec: FanoutSpec;
  servers: ServerFacts[];
  monitor: string;
  startMs: number;
  endMs: number;
  interrupted: boolean;
  opened: number;
  openFailures: Record<string, number>;
  published: Published[];
  publishOutcomes: Record<string, number>;
  publishLatency: Histogram;
  deliveries: number;
  deliverySpanSeconds: number;
  toFirst: number[];
  toLast: number[];
  judged: StreamJudgement[];
  stormAt: number | undefined;
  stormTimes: number[];
  closes: Record<string, number>;
  memory: { pid: number; before: number; after: number } | undefined;
  client: ClientCpu;
  /** The summary's line when the servers stopped answering and the run ended there (silence-watch.ts). */
  endedEarly?: string;
  /** The summary's line when the server lost the run's monitor and the run ended there (lost-state.ts). */
  lostState?: string;
}

/** Percentiles of raw samples. */
export function samplePercentiles(samples: readonly number[]): Percentiles {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]! : Number.NaN);
  return { n: sorted.length, p50: at(50), p99: at(99), p999: at(99.9), max: sorted.at(-1) ?? Number.NaN };
}

export function fanoutFigures(input: FanoutFigureInput): FanoutFigures {
  const { spec } = input;
  const elapsed = Math.max(0.001, (input.endMs - input.startMs) / 1000);
  const acknowledged = input.published.filter((p) => p.seq !== null).length;
  const refused: Record<string, number> = {};
  for (const [k, n] of Object.entries(input.publishOutcomes)) if (k !== 'ok') refused[k] = n;
  const sum = (pick: (j: StreamJudgement) => { before: number; after: number }) => ({
    before: input.judged.reduce((a, j) => a + pick(j).before, 0),
    after: input.judged.reduce((a, j) => a + pick(j).after, 0),
  });
  const publishSeconds = input.published.length ? (Math.max(...input.published.map((p) => p.answer)) - input.startMs) / 1000 : elapsed;
  const warnings: string[] = [];
  if (input.client.saturated) warnings.push(`the load generator may have been the bottleneck: ${input.client.saturated}`);
  if (input.endedEarly) warnings.push(input.endedEarly);
  if (input.lostState) warnings.push(input.lostState);
  if (input.opened < spec.streams) warnings.push(`only ${num(input.opened)} of ${num(spec.streams)} streams opened`);
  const undeliveredOpen = input.judged.reduce((a, j) => a + j.undelivered.open, 0);
  const away = input.judged.reduce((a, j) => a + j.undelivered.streamsAway, 0);
  if (away > 0 && !input.endedEarly && !input.lostState) warnings.push(`${num(away)} streams were not back from a reconnect when the run ended (${num(input.judged.reduce((a, j) => a + j.undelivered.away, 0))} events not delivered to them): a longer --drain lets them catch up`);
  if (undeliveredOpen > 0) warnings.push(`${num(undeliveredOpen)} events had not reached streams that were open when the run ended (--drain ${showMs(spec.drainMs)}): the server was behind, or stopped delivering`);
  const achieved = input.published.length / Math.max(0.001, publishSeconds);
  if (achieved < spec.rate * 0.9 && !input.interrupted && !input.endedEarly && !input.lostState && input.published.length > 10) warnings.push(`the publisher reached ${rate(achieved, '/s')} of the ${rate(spec.rate, '/s')} asked: the server answered publishes too slowly for the open loop`);
  return {
    scenario: 'fanout',
    interrupted: input.interrupted,
    seed: spec.seed,
    servers: input.servers,
    monitor: input.monitor,
    flags: {
      streams: spec.streams,
      subscriptions: spec.subscriptions,
      rate: spec.rate,
      size: spec.size,
      ...(spec.durationMs !== undefined ? { duration: showMs(spec.durationMs) } : {}),
      ...(spec.events !== undefined ? { events: spec.events } : {}),
      ...(spec.stormAtMs !== undefined ? { reconnect_storm: showMs(Math.round(spec.stormAtMs)) } : {}),
      threads: spec.threads,
    },
    startedAt: new Date(input.startMs).toISOString(),
    elapsedSeconds: elapsed,
    ...(input.lostState && { lostState: input.lostState }),
    streams: { asked: spec.streams, opened: input.opened, refused: input.openFailures },
    publishes: { sent: input.published.length, acknowledged, perSecond: acknowledged / Math.max(0.001, publishSeconds), refused, latency: percentiles(input.publishLatency) },
    deliveries: { total: input.deliveries, perSecond: input.deliveries / input.deliverySpanSeconds },
    toFirst: samplePercentiles(input.toFirst),
    toLast: samplePercentiles(input.toLast),
    lost: sum((j) => j.lost),
    duplicated: sum((j) => j.duplicated),
    undelivered: {
      open: input.judged.reduce((a, j) => a + j.undelivered.open, 0),
      away: input.judged.reduce((a, j) => a + j.undelivered.away, 0),
      streamsAway: input.judged.reduce((a, j) => a + j.undelivered.streamsAway, 0),
    },
    storm: input.stormAt === undefined ? undefined : { atSeconds: input.stormAt / 1000, reconnected: input.stormTimes.length, reconnect: samplePercentiles(input.stormTimes) },
    serverClosed: input.closes,
    serverMemory: input.memory
      ? { pid: input.memory.pid, beforeMB: input.memory.before / 2 ** 20, afterMB: input.memory.after / 2 ** 20, perStreamKB: (input.memory.after - input.memory.before) / Math.max(1, input.opened) / 1024 }
      : undefined,
    offences: input.judged.flatMap((j) => j.offences).slice(0, 40),
    client: input.client,
    warnings,
  };
}

export const fanoutViolations = (f: FanoutFigures): number => f.lost.before + f.lost.after + f.duplicated.before + f.duplicated.after;

export function fanoutSummary(f: FanoutFigures): string {
  const out: string[] = [];
  out.push(`vigil bench fanout${f.interrupted ? ' (interrupted: figures of what ran)' : ''}: ${Object.entries(f.flags).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  for (const s of f.servers) out.push(`  server ${s.root}: ${s.software}${s.node ? `, node ${s.node}` : ''}`);
  out.push(`  monitor ${f.monitor}; ran ${f.elapsedSeconds.toFixed(1)} s from ${f.startedAt}; machine load ${f.client.load[0].toFixed(1)} → ${f.client.load[1].toFixed(1)} on ${f.client.cores} cores (a shared machine moves every rate)`);
  out.push('');
  out.push(`streams     ${num(f.streams.opened)} of ${num(f.streams.asked)} open${Object.keys(f.streams.refused).length ? ` (${Object.entries(f.streams.refused).map(([k, n]) => `${k} ×${n}`).join(', ')})` : ''}`);
  const refused = Object.entries(f.publishes.refused);
  out.push(
    `publishes   ${num(f.publishes.acknowledged)} acknowledged of ${num(f.publishes.sent)} (${rate(f.publishes.perSecond, '/s')}); acknowledged p50 ${ms(f.publishes.latency.p50)}, p99 ${ms(f.publishes.latency.p99)}${refused.length ? `; refused or unanswered: ${refused.map(([k, n]) => `${k} ×${n}`).join(', ')}` : ''}`,
  );
  out.push(`deliveries  ${num(f.deliveries.total)} (${rate(f.deliveries.perSecond, '/s')})`);
  out.push('');
  out.push('publish sent → delivered, over events');
  out.push(
    table(
      ['', 'events', 'p50', 'p99', 'max'],
      [
        ['to the first stream', num(f.toFirst.n), ms(f.toFirst.p50), ms(f.toFirst.p99), ms(f.toFirst.max)],
        ['to the last stream', num(f.toLast.n), ms(f.toLast.p50), ms(f.toLast.p99), ms(f.toLast.max)],
      ],
    ),
  );
  out.push('');
  out.push("promises, judged from the streams' own records (each acknowledged event on each stream exactly once; lost: skipped while a later event arrived)");
  const rows: string[][] = [];
  if (f.storm) {
    rows.push(['published before the storm: lost', num(f.lost.before)], ['published before the storm: duplicated', num(f.duplicated.before)]);
    rows.push(['published after it began: lost', num(f.lost.after)], ['published after it began: duplicated', num(f.duplicated.after)]);
  } else rows.push(['lost', num(f.lost.before)], ['duplicated', num(f.duplicated.before)]);
  rows.push(['not delivered by the end, open streams', num(f.undelivered.open)], ['not delivered by the end, streams not back', `${num(f.undelivered.away)} (${num(f.undelivered.streamsAway)} streams)`]);
  out.push(table(['figure', 'value'], rows));
  if (f.storm) out.push(`reconnect storm at ${f.storm.atSeconds.toFixed(1)} s: ${num(f.storm.reconnected)} of ${num(f.streams.opened)} streams back with Last-Event-ID before the end; reconnect p50 ${ms(f.storm.reconnect.p50)}, p99 ${ms(f.storm.reconnect.p99)}, max ${ms(f.storm.reconnect.max)}`);
  const closed = Object.entries(f.serverClosed);
  if (closed.length) out.push(`streams ended by the server (resumed with Last-Event-ID): ${closed.map(([k, n]) => `${k} ×${n}`).join(', ')}`);
  if (f.serverMemory) out.push(`server memory (pid ${f.serverMemory.pid}): ${f.serverMemory.beforeMB.toFixed(1)} → ${f.serverMemory.afterMB.toFixed(1)} MB RSS with the streams open, ${f.serverMemory.perStreamKB.toFixed(2)} KB per stream`);
  out.push('');
  out.push(`client: ${f.client.coresUsed.toFixed(2)} of ${f.client.cores} cores (${f.client.cpuSeconds.toFixed(1)} CPU s); threads busy ${f.client.threadBusy.map((b) => `${Math.round(b * 100)}%`).join(', ')} (the last is the publisher)`);
  for (const w of f.warnings) out.push(`warning: ${w}`);
  const bad = fanoutViolations(f);
  if (bad > 0) {
    out.push('');
    out.push(`VIOLATIONS: ${plural(f.lost.before + f.lost.after, 'event')} lost, ${plural(f.duplicated.before + f.duplicated.after, 'extra delivery', 'extra deliveries')}; the first records:`);
    for (const o of f.offences.slice(0, 10)) out.push(`  ${o.kind.toUpperCase()}: seq ${o.seq} on stream ${o.stream} (subscription ${o.subscription}), published ${o.phase === 'after' ? 'after the storm began' : f.storm ? 'before the storm' : ''}, arrived ${o.times} times`);
  } else out.push('no violation: every acknowledged event reached every open stream exactly once');
  return `${out.join('\n')}\n`;
}
