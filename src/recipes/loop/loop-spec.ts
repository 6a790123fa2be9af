// A step's `loop: {until, max_iterations}` and `usage_limit_wait`, read once
// when the recipe is planned (so `recipe check` and `sequence` refuse the
// same mistakes), and what a loop's condition asks of one iteration.
import { type Condition, parseCondition } from '../executor/conditions.ts';
import { durationSeconds } from '../sessions/durations.ts';
import type { RecipeStep } from '../types.ts';

export type LoopUntil = { kind: 'build' } | { kind: 'line'; line: string } | { kind: 'if'; condition: Condition };

export interface LoopSpec {
  until: LoopUntil;
  maxIterations: number;
}

export const DEFAULT_USAGE_LIMIT_WAIT_S = 6 * 3600;

/** The problems of a step's loop and usage_limit_wait, as `steps[i] ("label").field: …` sentences. */
export function loopProblems(step: RecipeStep, index: number, labels: ReadonlySet<string>): string[] {
  const at = `steps[${index}] ("${step.label}")`;
  const problems: string[] = [];
  if (step.usage_limit_wait !== undefined) {
    const s = durationSeconds(step.usage_limit_wait);
    if (typeof s !== 'number') problems.push(`${at}.usage_limit_wait: ${s.error}`);
  }
  const loop = step.loop;
  if (!loop) return problems;
  const kinds = Object.keys(loop.until ?? {});
  if (kinds.length !== 1) problems.push(`${at}.loop.until: give exactly one of build, line, if (got ${kinds.length === 0 ? 'none' : kinds.join(', ')})`);
  if (loop.until?.build !== undefined && !step.build_command) problems.push(`${at}.loop.until.build: the step has no build_command to pass; add "build_command" or loop until a line or an if:`);
  if (loop.until?.line !== undefined && (loop.until.line.trim() === '' || /[\r\n]/.test(loop.until.line)))
    problems.push(`${at}.loop.until.line: must be one non-empty line (the agent prints it as a whole line of its final message)`);
  if (loop.until?.if !== undefined) {
    try {
      for (const ref of parseCondition(loop.until.if).steps)
        if (ref !== step.label && !labels.has(ref)) problems.push(`${at}.loop.until.if: unknown step "${ref}"; labels in this recipe: ${[...labels].join(', ')}`);
    } catch (error) {
      problems.push(`${at}.loop.until.if: ${(error as Error).message} in ${JSON.stringify(loop.until.if)} (the grammar of if:, with steps.${step.label} the iteration that just ended)`);
    }
  }
  if (!Number.isInteger(loop.max_iterations) || loop.max_iterations < 1) problems.push(`${at}.loop.max_iterations: must be a whole number ≥ 1 (a hard stop)`);
  return problems;
}

/** The loop of a step whose problems were checked (loopProblems), or null. */
export function loopOf(step: RecipeStep): LoopSpec | null {
  const loop = step.loop;
  if (!loop) return null;
  const u = loop.until;
  const until: LoopUntil = u.build ? { kind: 'build' } : u.line !== undefined ? { kind: 'line', line: u.line.trim() } : { kind: 'if', condition: parseCondition(u.if ?? 'false') };
  return { until, maxIterations: loop.max_iterations };
}

/** Milliseconds a step may wait in all for usage limits to reset. */
export function usageLimitWaitMs(step: RecipeStep): number {
  const s = step.usage_limit_wait === undefined ? DEFAULT_USAGE_LIMIT_WAIT_S : durationSeconds(step.usage_limit_wait);
  return (typeof s === 'number' ? s : DEFAULT_USAGE_LIMIT_WAIT_S) * 1000;
}

/** What the loop waits for, in words ("build_command passing", "the line \"DONE\"", "if: …"). */
export function describeUntil(until: LoopUntil): string {
  if (until.kind === 'build') return 'build_command passing';
  if (until.kind === 'line') return `the line ${JSON.stringify(until.line)}`;
  return `if: ${until.condition.source}`;
}

/** How the plan (--dry-run) shows a step's loop, or null. */
export function loopText(step: RecipeStep): string | null {
  const loop = loopOf(step);
  return loop ? `loop until ${describeUntil(loop.until)}, at most ${loop.maxIterations} iterations${step.fresh_session ? ' (fresh sessions)' : ''}` : null;
}

/** Whether `text` has `line` as a whole line (surrounding spaces aside): a line quoted inside a sentence never counts. */
export function hasWholeLine(text: string, line: string): boolean {
  return text.split(/\r?\n/).some((l) => l.trim() === line);
}
