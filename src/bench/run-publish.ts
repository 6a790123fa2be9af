// `vigil bench publish`: closed-loop durable publishes over C connections
// spread over the worker threads and the nodes; the rate of acknowledged
// publishes, their latency, refusals, and one promise checked from the
// clients' records: no two acknowledged publishes were given the same seq.
import { cpuMeter } from './client-cpu.ts';
import { nowMs } from './clock.ts';
import { ms, num, plural, rate, table } from './format.ts';
import { emptyHistogram, type Histogram, mergeInto, type Percentiles, percentile, percentiles } from './histogram.ts';
import type { ClientCpu } from './client-cpu.ts';
import type { RunHooks } from './outcome.ts';
import type { PublishThreadData } from './publish-thread.ts';
import { type RunHeader, withTarget } from './setup.ts';
import { endedEarly, SilenceWatch } from './silence-watch.ts';
import { LostStateWatch, lostStateText, notFoundCount } from './lost-state.ts';
import { type PublishSpec, showMs } from './spec.ts';
import { startThreads } from './threads.ts';

export interface PublishFigures extends RunHeader {
  scenario: 'publish';
  acknowledged: number;
  perSecond: number;
  latency: Percentiles;
  refused: Record<string, number>;
  /** Seqs the server gave to two acknowledged publishes (a violation). */
  duplicateSeqs: number;
  duplicateExamples: number[];
  client: ClientCpu;
  warnings: string[];
}

export interface PublishRun {
  figures: PublishFigures;
  series: number[];
  latency: Histogram;
}

export async function runPublish(spec: PublishSpec, hooks: RunHooks = {}): Promise<PublishRun> {
  const step = hooks.step ?? (() => {});
  return await withTarget(spec, 'publish', ['observe'], 8, step, async (_wire, target) => {
    const threads = Math.max(1, Math.min(spec.threads, spec.connections));
    const data: PublishThreadData[] = Array.from({ length: threads }, () => ({ mode: 'closed', monitor: target.monitor, ownerToken: target.ownerToken, size: spec.size, timeoutMs: spec.timeoutMs, roots: [] }));
    for (let i = 0; i < spec.connections; i++) data[i % threads]!.roots.push(spec.bases[i % spec.bases.length]!);
    const latency = emptyHistogram();
    const outcomes: Record<string, number> = {};
    const series: number[] = [];
    const seen = new SeqSet();
    const duplicates: number[] = [];
    let duplicateSeqs = 0;
    let unanswered = 0;
    const busy: number[] = new Array(threads).fill(0);
    const pool = await startThreads('publish', data as unknown as Array<Record<string, unknown>>, (m) => {
      if (m.type === 'batch') {
        mergeInto(latency, m.latency as Histogram);
        unanswered += m.unanswered as number;
        for (const [k, n] of Object.entries(m.outcomes as Record<string, number>)) outcomes[k] = (outcomes[k] ?? 0) + n;
        for (const [i, n] of Object.entries(m.series as Record<number, number>)) {
          while (series.length <= Number(i)) series.push(0);
          series[Number(i)]! += n;
        }
        for (const seq of m.seqs as number[]) {
          if (!seen.add(seq)) {
            duplicateSeqs++;
            if (duplicates.length < 20) duplicates.push(seq);
          }
        }
      } else if (m.type === 'done') busy[m.thread] = m.elu as number;
    });
    step(`publishing over ${num(spec.connections)} connections on ${threads} threads for ${spec.durationMs / 1000} s (monitor ${target.monitor})`);
    const cpu = cpuMeter();
    const runStart = nowMs();
    pool.go({ startMs: runStart });
    let interrupted = false;
    let silentSince: number | undefined;
    const silence = new SilenceWatch(runStart);
    const lostState = new LostStateWatch();
    let lostAt: number | undefined;
    await new Promise<void>((resolve) => {
      const ticker = setInterval(() => {
        const elapsed = nowMs() - runStart;
        interrupted ||= hooks.signal?.aborted === true;
        silentSince = silence.silentSince(latency.count - unanswered, unanswered, nowMs());
        hooks.progress?.(`publish ${(elapsed / 1000).toFixed(1)} s of ${spec.durationMs / 1000} · ${rate((outcomes.ok ?? 0) / Math.max(0.001, elapsed / 1000), 'publishes/s')} · p99 ${ms(percentile(latency, 99))} · ${duplicateSeqs === 0 ? 'no duplicate seq' : `${duplicateSeqs} DUPLICATE SEQS`} so far`);
        lostAt = lostState.lostAt(outcomes, nowMs());
        if (elapsed >= spec.durationMs || interrupted || silentSince !== undefined || lostAt !== undefined) {
          clearInterval(ticker);
          resolve();
        }
      }, 250);
    });
    const endMs = nowMs();
    pool.stop();
    await pool.finished(spec.timeoutMs + 5000);
    if (pool.failures.length > 0) throw new Error(`a publisher thread failed: ${pool.failures.join('; ')}`);
    const client = cpu.stop(busy);
    const elapsed = Math.max(0.001, (endMs - runStart) / 1000);
    const refused: Record<string, number> = {};
    for (const [k, n] of Object.entries(outcomes)) if (k !== 'ok') refused[k] = n;
    const warnings = client.saturated ? [`the load generator may have been the bottleneck: ${client.saturated}`] : [];
    if (silentSince !== undefined) warnings.push(endedEarly(endMs - runStart, silentSince - runStart));
    const lost = lostAt === undefined ? undefined : lostStateText(lostAt - runStart, notFoundCount(outcomes));
    if (lost) warnings.push(lost);
    if (!outcomes.ok) warnings.push(`no publish was acknowledged: ${Object.entries(refused).map(([k, n]) => `${k} ×${n}`).join(', ') || 'no answers'}`);
    const figures: PublishFigures = {
      scenario: 'publish',
      interrupted,
      seed: spec.seed,
      servers: [...target.servers],
      monitor: target.monitor,
      flags: { connections: spec.connections, size: spec.size, duration: showMs(spec.durationMs), threads },
      startedAt: new Date(runStart).toISOString(),
      elapsedSeconds: elapsed,
      acknowledged: outcomes.ok ?? 0,
      perSecond: (outcomes.ok ?? 0) / elapsed,
      latency: percentiles(latency),
      refused,
      duplicateSeqs,
      duplicateExamples: duplicates,
      client,
      warnings,
      ...(lost && { lostState: lost }),
    };
    return { figures, series, latency };
  });
}

export function publishSummary(f: PublishFigures): string {
  const out: string[] = [];
  out.push(`vigil bench publish${f.interrupted ? ' (interrupted: figures of what ran)' : ''}: ${Object.entries(f.flags).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  for (const s of f.servers) out.push(`  server ${s.root}: ${s.software}${s.node ? `, node ${s.node}` : ''}`);
  out.push(`  monitor ${f.monitor}; ran ${f.elapsedSeconds.toFixed(1)} s from ${f.startedAt}; machine load ${f.client.load[0].toFixed(1)} → ${f.client.load[1].toFixed(1)} on ${f.client.cores} cores (a shared machine moves every rate)`);
  out.push('');
  out.push(`durable publishes acknowledged: ${num(f.acknowledged)} (${rate(f.perSecond, '/s')})`);
  out.push(table(['latency', 'n', 'p50', 'p99', 'p99.9', 'max'], [['publish', num(f.latency.n), ms(f.latency.p50), ms(f.latency.p99), ms(f.latency.p999), ms(f.latency.max)]]));
  const refused = Object.entries(f.refused);
  if (refused.length) out.push(`refused or unanswered: ${refused.map(([k, n]) => `${k} ×${n}`).join(', ')}`);
  out.push('');
  out.push(`client: ${f.client.coresUsed.toFixed(2)} of ${f.client.cores} cores (${f.client.cpuSeconds.toFixed(1)} CPU s); threads busy ${f.client.threadBusy.map((b) => `${Math.round(b * 100)}%`).join(', ')}`);
  for (const w of f.warnings) out.push(`warning: ${w}`);
  out.push(f.duplicateSeqs > 0 ? `VIOLATIONS: ${plural(f.duplicateSeqs, 'seq')} acknowledged twice, e.g. ${f.duplicateExamples.join(', ')}` : 'no violation: every acknowledged publish got a seq of its own');
  return `${out.join('\n')}\n`;
}

/**
 * A set of seqs as a growable bitmap from the first seq seen (a bit each keeps long runs small);
 * a seq far from it (another server's numbering) goes to a plain set.
 */
class SeqSet {
  private bits = new Uint8Array(1 << 16);
  private base: number | undefined;
  private readonly far = new Set<number>();

  /** Adds `seq`; false when it was there already. */
  add(seq: number): boolean {
    this.base ??= seq;
    const at = seq - this.base;
    if (at < 0 || at >= 2 ** 30) {
      if (this.far.has(seq)) return false;
      this.far.add(seq);
      return true;
    }
    const byte = at >>> 3;
    if (byte >= this.bits.length) {
      let n = this.bits.length;
      while (n <= byte) n *= 2;
      const grown = new Uint8Array(n);
      grown.set(this.bits);
      this.bits = grown;
    }
    const mask = 1 << (at & 7);
    if (this.bits[byte]! & mask) return false;
    this.bits[byte]! |= mask;
    return true;
  }
}
