// `vigil bench <scenario>` as a person and a machine use it: run the
// scenario (and, with --compare, the same one against a second server),
// print the summary or the JSON, write the HTML report, and say by the exit
// status whether a promise was broken. The CLI (src/cli/bench-commands.ts)
// only parses flags and calls this.
import { writeFileSync } from 'node:fs';
import { ExitCode, type ExitCodeValue } from '../errors/exit-codes.ts';
import { type Comparison, compare, comparisonText } from './compare.ts';
import type { RunHooks, ScenarioOutcome } from './outcome.ts';
import { ProgressLine } from './progress.ts';
import { reportPage } from './report.ts';
import { scenarioRunner } from './scenarios.ts';
import { BenchSetupError } from './setup.ts';
import { type Silent, silenceText, silentServers } from './silent-servers.ts';
import type { BenchSpec } from './spec.ts';

export interface BenchOptions {
  json: boolean;
  quiet: boolean;
  report: string | undefined;
  /** Protocol roots of the second server (--compare). */
  compare: string[];
}

export interface BenchIo {
  out: (text: string) => void;
  err: NodeJS.WriteStream;
  signal: AbortSignal;
}

/**
 * Exit status (src/errors/exit-codes.ts): 0 kept every promise, 1 a violation, 3 the server could not be set
 * up, stopped answering or lost the run's monitor during the run, 130 interrupted.
 */
export async function benchCommand(spec: BenchSpec, options: BenchOptions, io: BenchIo): Promise<ExitCodeValue> {
  const progress = new ProgressLine(options.json || options.quiet ? undefined : io.err);
  const hooks = (label: string): RunHooks => ({
    signal: io.signal,
    progress: progress.enabled ? (line) => progress.update(line) : undefined,
    step: options.quiet
      ? undefined
      : (line) => {
          progress.clear();
          io.err.write(`${label}${line}\n`);
        },
  });
  const run = scenarioRunner(spec);
  const outcomes: Array<{ label: string; outcome: ScenarioOutcome; bases: readonly string[]; silent: Silent[] }> = [];
  const runOn = async (on: BenchSpec, label: string) => {
    const outcome = await run(on, hooks(label));
    outcomes.push({ label: on.bases.join(', '), outcome, bases: on.bases, silent: await silentServers(on.bases, on.timeoutMs) });
  };
  try {
    await runOn(spec, options.compare.length ? 'first: ' : '');
    if (options.compare.length > 0 && !io.signal.aborted) {
      await runOn({ ...spec, bases: options.compare, monitor: undefined, ownerToken: undefined, ...('pid' in spec ? { pid: undefined } : {}) } as BenchSpec, 'second: ');
    }
  } catch (error) {
    progress.clear();
    if (error instanceof BenchSetupError) {
      io.err.write(`vigil bench ${spec.kind}: ${error.message}\n`);
      if (outcomes.length === 0) return ExitCode.unreachable;
    } else throw error;
  } finally {
    progress.clear();
  }
  const comparison: Comparison | undefined =
    outcomes.length === 2 ? compare({ label: outcomes[0]!.label, figures: outcomes[0]!.outcome.key }, { label: outcomes[1]!.label, figures: outcomes[1]!.outcome.key }) : undefined;
  if (options.json) {
    const runs = outcomes.map((o) => (o.silent.length > 0 ? { ...o.outcome.figures, silent_servers: o.silent } : o.outcome.figures));
    io.out(`${JSON.stringify(comparison ? { runs, comparison: comparison.rows } : runs[0], jsonNumbers, 2)}\n`);
  } else {
    for (const [i, o] of outcomes.entries()) {
      if (outcomes.length > 1) io.out(`${i === 0 ? 'first' : 'second'} server: ${o.label}\n`);
      io.out(o.outcome.text);
      if (o.silent.length > 0 && o.silent.length < o.bases.length) io.out(silenceText(spec.kind, o.silent, o.bases.length));
      if (i < outcomes.length - 1) io.out('\n');
    }
    if (comparison) io.out(`\n${comparisonText(comparison)}`);
  }
  if (options.report !== undefined) {
    const sections = outcomes.map((o, i) => o.outcome.section(outcomes.length > 1 ? `${i === 0 ? 'First' : 'Second'} server: ${o.label}` : o.label));
    try {
      writeFileSync(options.report, reportPage(spec, sections, comparison));
      if (!options.quiet) io.err.write(`report: ${options.report}\n`);
    } catch (error) {
      // The figures are printed already; only the page is lost, and the status says so.
      io.err.write(`vigil bench ${spec.kind}: the report could not be written to ${options.report}: ${(error as Error).message}\n`);
      return ExitCode.failed;
    }
  }
  const lost = outcomes.filter((o) => o.silent.length === o.bases.length);
  for (const o of lost) io.err.write(silenceText(spec.kind, o.silent, o.bases.length));
  const forgot = outcomes.filter((o) => o.outcome.lostState !== undefined);
  for (const o of forgot) io.err.write(`vigil bench ${spec.kind}: ${o.outcome.lostState}; the figures above are of the run until then\n`);
  const violations = outcomes.reduce((a, o) => a + o.outcome.violations, 0);
  if (violations > 0) return ExitCode.failed;
  if (lost.length > 0 || forgot.length > 0) return ExitCode.unreachable;
  if (outcomes.some((o) => o.outcome.figures.interrupted)) return ExitCode.cancelled;
  return ExitCode.ok;
}

/** NaN and Infinity are not JSON: they are written as null. */
function jsonNumbers(_key: string, value: unknown): unknown {
  return typeof value === 'number' && !Number.isFinite(value) ? null : value;
}
