// `vigil bench leases`, put together: set the server up through the
// protocol, start the client threads, follow them with the judge as their
// records come in (the progress line shows violations as they are found),
// stop on --duration, --cycles, a drained backlog or Ctrl-C, and make the
// figures.
import { cpuMeter } from './client-cpu.ts';
import { nowMs } from './clock.ts';
import { ms, num, rate } from './format.ts';
import { emptyHistogram, mergeInto, percentile } from './histogram.ts';
import { subjectName } from './lease-client.ts';
import { type LeaseFigures, leaseFigures } from './lease-figures.ts';
import { endedEarly, SilenceWatch } from './silence-watch.ts';
import { LostStateWatch, lostStateText, notFoundCount } from './lost-state.ts';
import { LeaseJudge } from './lease-judge.ts';
import type { LeaseBatch, ThreadDone } from './lease-records.ts';
import { LeaseTally } from './lease-tally.ts';
import type { RunHooks } from './outcome.ts';
import type { LeaseThreadData } from './lease-thread.ts';
import { generator } from './random.ts';
import { BenchSetupError, publishSubjects, subscribeMany, type Target, withTarget } from './setup.ts';
import type { LeaseSpec } from './spec.ts';
import { slot, startThreads } from './threads.ts';
import type { Wire } from './wire.ts';

export interface LeaseRun {
  figures: LeaseFigures;
  tally: LeaseTally;
  startMs: number;
  endMs: number;
}

export async function runLeases(spec: LeaseSpec, hooks: RunHooks = {}): Promise<LeaseRun> {
  const step = hooks.step ?? (() => {});
  return await withTarget(spec, 'leases', ['observe', 'act'], 32, step, async (wire, target) => {
    if (spec.mode === 'next' && !target.extensions.has('leases.next')) {
      const without = target.servers.filter((s) => !s.extensions.includes('leases.next')).map((s) => `${s.root} (${s.software}; lists ${s.extensions.join(', ') || 'no extensions'})`);
      throw new BenchSetupError(`--mode next takes the next subject with leases/claim {next: true} (protocol.md §21, extension leases.next), which ${without.join(' and ')} does not list in /discover; use --mode named against it.`);
    }
    return await measure(spec, hooks, wire, target, step);
  });
}

async function measure(spec: LeaseSpec, hooks: RunHooks, wire: Wire, target: Target, step: (line: string) => void): Promise<LeaseRun> {
  const roots = spec.bases;
  step(`publishing ${num(spec.subjects)} subjects on monitor ${target.monitor}`);
  await publishSubjects(wire, roots[0]!, target, Array.from({ length: spec.subjects }, (_, i) => subjectName(spec.mode, i)));
  step(`subscribing ${num(spec.clients)} clients`);
  const subs = await subscribeMany(wire, roots, target, spec.clients, `agent:bench-c`, ['observe', 'act']);
  const fence = target.extensions.has('leases.fence');

  const threads = Math.min(spec.threads, spec.clients);
  const data: LeaseThreadData[] = Array.from({ length: threads }, () => ({ spec, clients: [], monitor: target.monitor, ownerToken: target.ownerToken, fence }));
  for (let i = 0; i < spec.clients; i++) data[i % threads]!.clients.push({ index: i, root: roots[i % roots.length]!, node: i % roots.length, sub: subs[i]! });

  // Made when the clients are released: the run's clock starts there.
  let judge: LeaseJudge | undefined;
  let tally: LeaseTally | undefined;
  const busy: number[] = new Array(threads).fill(0);
  const claimLatency = emptyHistogram();
  const pool = await startThreads('leases', data as unknown as Array<Record<string, unknown>>, (m) => {
    if (m.type === 'batch' && judge && tally) {
      const batch = m as unknown as LeaseBatch;
      tally.add(batch);
      for (const h of batch.holds) judge.add(h);
      for (const [op, h] of Object.entries(batch.latency)) if (op.startsWith('claim')) mergeInto(claimLatency, h!);
      judge.low(batch.thread, batch.low);
    } else if (m.type === 'done') busy[m.thread] = (m as unknown as ThreadDone).elu;
  });
  step(`running ${num(spec.clients)} clients on ${threads} threads${spec.durationMs !== undefined ? ` for ${spec.durationMs / 1000} s` : ''}${spec.cycles !== undefined ? ` (until ${num(spec.cycles)} cycles)` : ''}`);
  const cpu = cpuMeter();
  const runStart = nowMs();
  judge = new LeaseJudge(threads, runStart);
  tally = new LeaseTally(spec.clients, runStart, timelineSample(spec));
  const [j, t] = [judge, tally];
  hooks.started?.();
  pool.go({ startMs: runStart });
  let interrupted = false;
  let silentSince: number | undefined;
  const silence = new SilenceWatch(runStart);
  const lostState = new LostStateWatch();
  let lostAt: number | undefined;
  await new Promise<void>((resolve) => {
    const onAbort = () => {
      interrupted = true;
      finish();
    };
    const ticker = setInterval(() => {
      const elapsed = nowMs() - runStart;
      if (hooks.progress) {
        const grants = t.grants / Math.max(0.001, elapsed / 1000);
        const violations = j.violationCount;
        hooks.progress(
          `leases ${(elapsed / 1000).toFixed(1)} s${spec.durationMs !== undefined ? ` of ${spec.durationMs / 1000}` : ''} · ${rate(grants, 'grants/s')} · ${num(t.ended.complete + t.ended.release + t.ended.reject)} cycles · claim p99 ${ms(percentile(claimLatency, 99))} · ${violations === 0 ? 'no violation' : `${violations} VIOLATIONS`} so far`,
        );
      }
      const unanswered = t.nodes.reduce((sum, n) => sum + (n?.unanswered ?? 0), 0);
      silentSince = silence.silentSince(t.nodes.reduce((sum, n) => sum + (n?.latency.count ?? 0), 0) - unanswered, unanswered, nowMs());
      lostAt = lostState.lostAt(t.outcomes, nowMs());
      if ((spec.durationMs !== undefined && elapsed >= spec.durationMs) || Atomics.load(pool.counters, slot.stop) !== 0 || silentSince !== undefined || lostAt !== undefined) finish();
    }, 250);
    const finish = () => {
      clearInterval(ticker);
      hooks.signal?.removeEventListener('abort', onAbort);
      resolve();
    };
    if (hooks.signal?.aborted) onAbort();
    else hooks.signal?.addEventListener('abort', onAbort, { once: true });
  });
  const endMs = nowMs();
  hooks.stopped?.();
  pool.stop();
  // Clients end the hold they are in (or wait for an answer already on its way) before they stop.
  await pool.finished(spec.timeoutMs + 5000);
  if (pool.failures.length > 0) throw new Error(`a client thread failed: ${pool.failures.join('; ')}`);
  j.finish();
  const figures = leaseFigures({ spec, servers: [...target.servers], monitor: target.monitor, fence, startMs: runStart, endMs, interrupted, tally: t, judge: j, client: cpu.stop(busy) });
  if (silentSince !== undefined) figures.warnings.push(endedEarly(endMs - runStart, silentSince - runStart));
  if (lostAt !== undefined) {
    figures.lostState = lostStateText(lostAt - runStart, notFoundCount(t.outcomes));
    figures.warnings.push(figures.lostState);
  }
  return { figures, tally: t, startMs: runStart, endMs };
}

/** The subjects whose holds the report's timeline shows: the hottest few and some drawn at random (named mode). */
function timelineSample(spec: LeaseSpec): Set<string> | undefined {
  if (spec.mode === 'next') return undefined;
  const chosen = new Set<string>();
  for (let i = 0; i < Math.min(8, spec.subjects); i++) chosen.add(subjectName('named', i));
  const random = generator(spec.seed, 1_000_003);
  for (let k = 0; k < 40 && chosen.size < Math.min(12, spec.subjects); k++) chosen.add(subjectName('named', Math.floor(random() * spec.subjects)));
  return chosen;
}
