// The figures of a lease run (what --json prints and --compare divides), made
// from the tally, the judge and the client's CPU, and the summary a person
// reads at the end, with the offending records of every violation.
import type { ClientCpu } from './client-cpu.ts';
import { ms, num, plural, rate, table } from './format.ts';
import { emptyHistogram, type Percentiles, percentiles } from './histogram.ts';
import type { LeaseJudge, Violation } from './lease-judge.ts';
import type { Hold, OpRecord } from './lease-records.ts';
import { jain, type LeaseTally } from './lease-tally.ts';
import { describeSkew } from './random.ts';
import type { RunHeader, ServerFacts } from './setup.ts';
import { type LeaseSpec, showMs } from './spec.ts';

export interface LeaseFigures extends RunHeader {
  scenario: 'leases';
  mode: LeaseSpec['mode'];
  /** The clients sent fencing tokens (the servers list leases.fence). */
  fence: boolean;
  /** The run's start on the clients' clock (ms): record times are printed from it. */
  startMs: number;
  claims: { attempts: number; granted: number; perSecond: number };
  grants: { total: number; perSecond: number };
  cycles: { total: number; perSecond: number; complete: number; release: number; reject: number };
  latency: Record<string, Percentiles>;
  /** Per node of --base, in its order: every request's latency, refused and unanswered requests. */
  nodes: Array<{ root: string; latency: Percentiles; refused: number; unanswered: number }>;
  /** Requests that were refused or got no answer, by "operation code". */
  refusals: Record<string, number>;
  fairness: { jain: number; minGrants: number; maxGrants: number; clients: number };
  duplicates: number;
  lateEndsAccepted: number;
  lateEndsRefused: number;
  stalledHolds: number;
  lostHolds: number;
  reclaim: { crashes: number; reclaimed: number; unreclaimed: number; p50: number; p99: number; max: number };
  violations: Array<{ kind: Violation['kind']; subject: string; why: string; holds: Hold[] }>;
  client: ClientCpu;
  warnings: string[];
}

export interface LeaseFigureInput {
  spec: LeaseSpec;
  servers: ServerFacts[];
  monitor: string;
  fence: boolean;
  startMs: number;
  endMs: number;
  interrupted: boolean;
  tally: LeaseTally;
  judge: LeaseJudge;
  client: ClientCpu;
}

function sortedPercentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function leaseFigures(input: LeaseFigureInput): LeaseFigures {
  const { spec, tally, judge } = input;
  const elapsed = Math.max(0.001, (input.endMs - input.startMs) / 1000);
  const claimKeys = Object.entries(tally.outcomes).filter(([k]) => k.startsWith('claim'));
  const attempts = claimKeys.reduce((a, [, n]) => a + n, 0);
  const granted = claimKeys.filter(([k]) => k.endsWith(' ok')).reduce((a, [, n]) => a + n, 0);
  const refusals: Record<string, number> = {};
  for (const [key, n] of Object.entries(tally.outcomes)) if (!key.endsWith(' ok')) refusals[key] = n;
  const ended = tally.ended.complete + tally.ended.release + tally.ended.reject;
  const reclaimSorted = [...judge.reclaimTimes].sort((a, b) => a - b);
  const warnings: string[] = [];
  if (input.client.saturated) warnings.push(`the load generator may have been the bottleneck: ${input.client.saturated}`);
  if (tally.grants === 0) warnings.push(`no claim was granted: ${Object.entries(refusals).map(([k, n]) => `${k} ×${n}`).join(', ') || 'no answers'}`);
  if (tally.unanswered > 0) warnings.push(`${plural(tally.unanswered, 'end')} of a hold got no answer (counted neither as accepted nor as refused)`);
  return {
    scenario: 'leases',
    interrupted: input.interrupted,
    seed: spec.seed,
    mode: spec.mode,
    servers: input.servers,
    monitor: input.monitor,
    fence: input.fence,
    flags: {
      clients: spec.clients,
      subjects: spec.subjects,
      ...(spec.mode === 'named' ? { skew: describeSkew(spec.skew) } : {}),
      hold: spec.hold.minMs === spec.hold.maxMs ? showMs(spec.hold.minMs) : `${showMs(spec.hold.minMs)}-${showMs(spec.hold.maxMs)}`,
      ...(spec.durationMs !== undefined ? { duration: showMs(spec.durationMs) } : {}),
      ...(spec.cycles !== undefined ? { cycles: spec.cycles } : {}),
      lease_seconds: spec.leaseSeconds,
      renew: showMs(spec.renewMs),
      crash: spec.crash,
      stall: spec.stall,
      release: spec.release,
      reject: spec.reject,
      threads: spec.threads,
    },
    startedAt: new Date(input.startMs).toISOString(),
    startMs: input.startMs,
    elapsedSeconds: elapsed,
    claims: { attempts, granted, perSecond: attempts / elapsed },
    grants: { total: tally.grants, perSecond: tally.grants / elapsed },
    cycles: { total: ended, perSecond: ended / elapsed, ...tally.ended },
    latency: Object.fromEntries(Object.entries(tally.latency).map(([op, h]) => [op, percentiles(h)])),
    nodes: spec.bases.map((root, i) => {
      const n = tally.nodes[i];
      return { root, latency: percentiles(n?.latency ?? emptyHistogram()), refused: n?.refused ?? 0, unanswered: n?.unanswered ?? 0 };
    }),
    refusals,
    fairness: {
      jain: jain(tally.grantsPerClient),
      minGrants: Math.min(...tally.grantsPerClient),
      maxGrants: Math.max(...tally.grantsPerClient),
      clients: tally.grantsPerClient.length,
    },
    duplicates: judge.duplicateCount,
    lateEndsAccepted: judge.lateAcceptedCount,
    lateEndsRefused: tally.lateRefused.complete + tally.lateRefused.release + tally.lateRefused.reject,
    stalledHolds: tally.stalls,
    lostHolds: tally.lost,
    reclaim: {
      crashes: tally.crashes,
      reclaimed: reclaimSorted.length,
      unreclaimed: judge.unreclaimed,
      p50: sortedPercentile(reclaimSorted, 50),
      p99: sortedPercentile(reclaimSorted, 99),
      max: reclaimSorted.at(-1) ?? Number.NaN,
    },
    violations: judge.violations.map((v) => ({ kind: v.kind, subject: v.subject, why: v.why, holds: v.holds })),
    client: input.client,
    warnings,
  };
}

/** Why a take-next run left jobs undone, when its duration ended it (the default 10 s ends a large backlog early). */
function cutShort(f: LeaseFigures): string {
  const jobs = f.flags.subjects as number;
  if (f.cycles.complete >= jobs || f.interrupted || f.flags.cycles !== undefined || f.flags.reject !== 0 || f.flags.duration === undefined) return '';
  return `: the run ended at its duration (${f.flags.duration}) first; --cycles ${jobs} runs until every job is done`;
}

/** Violations the summary prints in full. */
const printed = 10;

const opOrder = ['claim', 'claim next', 'renew', 'complete', 'complete+next', 'release', 'release+next', 'reject', 'reject+next', 'subscribe'];

/** The summary a person reads at the end of `vigil bench leases`. */
export function leaseSummary(f: LeaseFigures): string {
  const out: string[] = [];
  const flags = Object.entries(f.flags)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  out.push(`vigil bench leases (${f.mode}${f.interrupted ? ', interrupted: figures of what ran' : ''}): ${flags}; seed ${f.seed}`);
  for (const s of f.servers) out.push(`  server ${s.root}: ${s.software}${s.node ? `, node ${s.node}` : ''}; extensions ${s.extensions.join(', ') || 'none'}`);
  out.push(`  monitor ${f.monitor}; fencing tokens ${f.fence ? 'sent' : 'not sent (the server does not list leases.fence)'}`);
  out.push(`  ran ${f.elapsedSeconds.toFixed(1)} s from ${f.startedAt}; machine load ${f.client.load[0].toFixed(1)} → ${f.client.load[1].toFixed(1)} on ${f.client.cores} cores (a shared machine moves every rate)`);
  out.push('');
  out.push('throughput');
  out.push(`  claims    ${num(f.claims.attempts)} (${rate(f.claims.perSecond, '/s')}), ${num(f.claims.granted)} granted${f.mode === 'next' ? ' (take-next claims; most grants come with complete-and-take-next)' : ''}`);
  out.push(`  grants    ${num(f.grants.total)} (${rate(f.grants.perSecond, '/s')})`);
  out.push(`  cycles    ${num(f.cycles.total)} (${rate(f.cycles.perSecond, '/s')}): ${num(f.cycles.complete)} completed, ${num(f.cycles.release)} released, ${num(f.cycles.reject)} rejected`);
  if (f.mode === 'next') out.push(`  jobs      ${num(f.cycles.complete)} of ${num(f.flags.subjects as number)} completed${cutShort(f)}`);
  out.push('');
  out.push('latency (sent → answered, on the client)');
  const ops = Object.keys(f.latency).sort((a, b) => rank(a) - rank(b));
  out.push(table(['operation', 'n', 'p50', 'p99', 'p99.9', 'max'], ops.map((op) => { const p = f.latency[op]!; return [op, num(p.n), ms(p.p50), ms(p.p99), ms(p.p999), ms(p.max)]; })));
  if (f.nodes.length > 1) {
    out.push('');
    out.push('per node (every request it was sent)');
    out.push(table(['node', 'n', 'p50', 'p99', 'max', 'refused', 'unanswered'], f.nodes.map((n) => [n.root, num(n.latency.n), ms(n.latency.p50), ms(n.latency.p99), ms(n.latency.max), num(n.refused), num(n.unanswered)])));
  }
  const refusals = Object.entries(f.refusals).sort((a, b) => b[1] - a[1]);
  if (refusals.length > 0) {
    out.push('');
    out.push('refused or unanswered');
    out.push(table(['operation and code', 'n'], refusals.map(([k, n]) => [k, num(n)])));
  }
  out.push('');
  out.push(`fairness: Jain's index ${Number.isFinite(f.fairness.jain) ? f.fairness.jain.toFixed(3) : '–'} over ${f.fairness.clients} clients; grants per client ${num(f.fairness.minGrants)} to ${num(f.fairness.maxGrants)}`);
  out.push('');
  out.push("promises, judged from the clients' own records");
  const r = f.reclaim;
  out.push(
    table(
      ['figure', 'value'],
      [
        ['duplicates (two holders provably at once)', num(f.duplicates)],
        ['late ends accepted (after expiry and re-grant)', num(f.lateEndsAccepted)],
        ['late ends refused LEASE_LOST', `${num(f.lateEndsRefused)} (${plural(f.stalledHolds, 'hold')} stalled on purpose)`],
        ['holds given up (a renewal refused)', num(f.lostHolds)],
        ['crashed holders', `${num(r.crashes)}: ${num(r.reclaimed)} reclaimed, ${num(r.unreclaimed)} not granted again before the end`],
        ['reclaim time (latest expiry → next grant)', r.reclaimed ? `p50 ${ms(r.p50)}, p99 ${ms(r.p99)}, max ${ms(r.max)}` : '–'],
      ],
      '  ',
      2,
    ),
  );
  out.push('');
  const busy = f.client.threadBusy.map((b) => `${Math.round(b * 100)}%`).join(', ');
  out.push(`client: ${f.client.coresUsed.toFixed(2)} of ${f.client.cores} cores (${f.client.cpuSeconds.toFixed(1)} CPU s); threads busy ${busy || '–'}`);
  for (const w of f.warnings) out.push(`warning: ${w}`);
  if (f.violations.length > 0 || f.duplicates + f.lateEndsAccepted > 0) {
    out.push('');
    const shown = f.violations.slice(0, printed);
    const more = f.duplicates + f.lateEndsAccepted - shown.length;
    out.push(`VIOLATIONS: ${plural(f.duplicates, 'duplicate')}, ${plural(f.lateEndsAccepted, 'late end')} accepted; the records of ${more > 0 ? `the first ${shown.length} (--json and --report keep up to ${f.violations.length})` : 'each'} follow, times in ms from the start`);
    for (const v of shown) out.push(violationText(v, f.startMs));
  } else {
    out.push('no violation: no two holders at once, no late end accepted');
  }
  return `${out.join('\n')}\n`;
}

const rank = (op: string) => {
  const i = opOrder.indexOf(op);
  return i < 0 ? opOrder.length : i;
};

/** One violation with the records of both holds, times in ms from the run's start. */
export function violationText(v: { kind: string; subject: string; why: string; holds: Hold[] }, t0: number): string {
  const at = (t: number) => `+${(t - t0).toFixed(1)}`;
  const op = (r: OpRecord) => `${r.op}${r.next ? '+next' : ''} sent ${at(r.send)} answered ${at(r.answer)} → ${r.status === 0 ? 'no answer' : r.status}${r.code ? ` ${r.code}` : ''}`;
  const lines = [`  ${v.kind.toUpperCase()} on "${v.subject}": ${v.why}`];
  for (const [i, h] of v.holds.entries()) {
    lines.push(`    hold ${i === 0 ? 'A' : 'B'}: holder ${h.holder} (client ${h.client}), lease ${h.durationMs} ms, fence ${h.fence ?? 'none'}`);
    lines.push(`      ${op(h.grant)}`);
    for (const r of h.renews) lines.push(`      ${op(r)}`);
    if (h.end) lines.push(`      ${op(h.end)}`);
    if (h.crashedAt !== undefined) lines.push(`      crashed at ${at(h.crashedAt)} holding it`);
    if (h.stalled) lines.push('      stalled: stopped renewing and ended past its lease');
  }
  return lines.join('\n');
}
