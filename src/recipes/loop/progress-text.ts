// How a step's loop and a usage-limit wait read in the live view and in
// `vigil runs`: "iteration 2/5", "waiting for claude usage limit reset at
// 15:00 (42m left)", and one line per finished iteration.
import type { StepRecord } from '../records/run-record.ts';
import { describeWait } from '../sessions/usage-wait.ts';

/** "iteration 2/5", or '' for a step without a loop. */
export function iterationText(s: StepRecord): string {
  return s.loop ? `iteration ${s.loop.iteration}/${s.loop.max_iterations}` : '';
}

/** The countdown of a step waiting for a usage limit to reset, or ''. */
export function waitingText(s: StepRecord, now = Date.now()): string {
  return s.waiting ? describeWait(s.waiting.provider, Date.parse(s.waiting.until), now) : '';
}

/** What a step is doing beyond its status: its iteration and its wait (only while its run is live), joined. */
export function stepProgress(s: StepRecord, now = Date.now(), live = true): string {
  return [iterationText(s), live ? waitingText(s, now) : ''].filter(Boolean).join('  ');
}

/** The loop's lines under a step in `vigil runs <id>`: why it stopped, then each iteration with its usage. */
export function loopLines(s: StepRecord): string[] {
  const loop = s.loop;
  if (!loop) return [];
  const head = `loop until ${loop.until}: ${loop.iterations.length} of at most ${loop.max_iterations} iterations${loop.stopped ? `, stopped: ${loop.stopped}` : ''}`;
  const each = loop.iterations.map((i) => {
    const usd = i.usage.usd_unknown ? 'usd unknown' : `$${i.usage.usd}`;
    const build = i.build ? `  build ${i.build}` : '';
    return `  ${String(i.n).padStart(3)}. ${i.status.padEnd(9)}${build}  ${i.usage.input_tokens + i.usage.output_tokens} tokens ${usd}${i.reason ? `  ${i.reason}` : ''}`;
  });
  return [head, ...each];
}
