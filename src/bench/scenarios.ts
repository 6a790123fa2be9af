// The three scenarios behind one shape (command.ts's ScenarioOutcome): each
// runs, then gives its figures, its summary, its headline figures for
// --compare and its section of the HTML report.
import { count, type KeyFigure, millis, perSecond } from './compare.ts';
import { type LeaseFigures, leaseSummary } from './lease-figures.ts';
import { leaseSection } from './report-leases.ts';
import type { RunHooks, ScenarioOutcome } from './outcome.ts';
import { runFanout } from './run-fanout.ts';
import { runLeases } from './run-leases.ts';
import { publishSummary, runPublish } from './run-publish.ts';
import { fanoutSection, publishSection } from './report-streams.ts';
import { fanoutSummary, fanoutViolations } from './stream-figures.ts';
import type { BenchSpec } from './spec.ts';

export type ScenarioRunner = (spec: BenchSpec, hooks: RunHooks) => Promise<ScenarioOutcome>;

export function scenarioRunner(spec: BenchSpec): ScenarioRunner {
  return { leases, fanout, publish }[spec.kind];
}

const fanout: ScenarioRunner = async (spec, hooks) => {
  if (spec.kind !== 'fanout') throw new Error('fanout runner given another scenario');
  const run = await runFanout(spec, hooks);
  const f = run.figures;
  return {
    figures: f,
    text: fanoutSummary(f),
    key: [
      { name: 'publishes acknowledged per second', value: f.publishes.perSecond, show: perSecond, better: 'higher' },
      { name: 'deliveries per second', value: f.deliveries.perSecond, show: perSecond, better: 'higher' },
      { name: 'publish → first p50', value: f.toFirst.p50, show: millis, better: 'lower' },
      { name: 'publish → first p99', value: f.toFirst.p99, show: millis, better: 'lower' },
      { name: 'publish → last p50', value: f.toLast.p50, show: millis, better: 'lower' },
      { name: 'publish → last p99', value: f.toLast.p99, show: millis, better: 'lower' },
      { name: 'publish → last max', value: f.toLast.max, show: millis, better: 'lower' },
      { name: 'events lost', value: f.lost.before + f.lost.after, show: count, better: 'lower' },
      { name: 'events duplicated', value: f.duplicated.before + f.duplicated.after, show: count, better: 'lower' },
      ...(f.storm ? [{ name: 'storm reconnect p99', value: f.storm.reconnect.p99, show: millis, better: 'lower' as const }] : []),
      { name: 'client CPU (cores)', value: f.client.coresUsed, show: (n: number) => n.toFixed(2), better: 'lower' },
    ],
    violations: fanoutViolations(f),
    ...(f.lostState && { lostState: f.lostState }),
    section: (title) => fanoutSection(title, run),
  };
};

const publish: ScenarioRunner = async (spec, hooks) => {
  if (spec.kind !== 'publish') throw new Error('publish runner given another scenario');
  const run = await runPublish(spec, hooks);
  const f = run.figures;
  return {
    figures: f,
    text: publishSummary(f),
    key: [
      { name: 'publishes acknowledged per second', value: f.perSecond, show: perSecond, better: 'higher' },
      { name: 'publish p50', value: f.latency.p50, show: millis, better: 'lower' },
      { name: 'publish p99', value: f.latency.p99, show: millis, better: 'lower' },
      { name: 'publish p99.9', value: f.latency.p999, show: millis, better: 'lower' },
      { name: 'seqs given twice', value: f.duplicateSeqs, show: count, better: 'lower' },
      { name: 'client CPU (cores)', value: f.client.coresUsed, show: (n: number) => n.toFixed(2), better: 'lower' },
    ],
    violations: f.duplicateSeqs,
    ...(f.lostState && { lostState: f.lostState }),
    section: (title) => publishSection(title, run),
  };
};

const leases: ScenarioRunner = async (spec, hooks) => {
  if (spec.kind !== 'leases') throw new Error('leases runner given another scenario');
  const run = await runLeases(spec, hooks);
  const f = run.figures;
  return {
    figures: f,
    text: leaseSummary(f),
    key: leaseKeyFigures(f),
    violations: f.duplicates + f.lateEndsAccepted,
    ...(f.lostState && { lostState: f.lostState }),
    section: (title) => leaseSection(title, run),
  };
};

export function leaseKeyFigures(f: LeaseFigures): KeyFigure[] {
  const claim = f.latency[f.mode === 'next' ? 'claim next' : 'claim'];
  const end = f.latency[f.mode === 'next' ? 'complete+next' : 'complete'];
  return [
    { name: 'claims per second', value: f.claims.perSecond, show: perSecond, better: 'higher' },
    { name: 'grants per second', value: f.grants.perSecond, show: perSecond, better: 'higher' },
    { name: 'cycles per second', value: f.cycles.perSecond, show: perSecond, better: 'higher' },
    { name: 'claim p50', value: claim?.p50 ?? Number.NaN, show: millis, better: 'lower' },
    { name: 'claim p99', value: claim?.p99 ?? Number.NaN, show: millis, better: 'lower' },
    { name: 'complete p99', value: end?.p99 ?? Number.NaN, show: millis, better: 'lower' },
    { name: "fairness (Jain's index)", value: f.fairness.jain, show: (n) => (Number.isFinite(n) ? n.toFixed(3) : '–'), better: 'higher' },
    { name: 'duplicates', value: f.duplicates, show: count, better: 'lower' },
    { name: 'late ends accepted', value: f.lateEndsAccepted, show: count, better: 'lower' },
    { name: 'reclaim p50', value: f.reclaim.p50, show: millis, better: 'lower' },
    { name: 'reclaim p99', value: f.reclaim.p99, show: millis, better: 'lower' },
    { name: 'client CPU (cores)', value: f.client.coresUsed, show: (n) => n.toFixed(2), better: 'lower' },
  ];
}
