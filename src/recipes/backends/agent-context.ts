// What a backend gets to run a step inside a pool worker: the task, the
// shared watchdog, a way to start supervised programs (sandboxed when the
// step asks for a VM) and to report phases and output.
import type { StepTask, UsageReport } from '../pool/step-task.ts';
import type { SupervisedResult, Watchdog } from '../process/process-group.ts';
import type { FactsSink } from '../sessions/agent-session.ts';

export interface SpawnRequest {
  command: string;
  args: string[];
  stdin?: string;
  env?: Record<string, string>;
  /** Receives stdout; everything is also appended to the step's output unless `quiet`. */
  onStdout?(chunk: Buffer): void;
  /** Receives stderr (always appended to the step's output too). */
  onStderr?(chunk: Buffer): void;
  quiet?: boolean;
  /** Stops the program early (its group is killed). */
  abort?: AbortSignal;
}

export interface AgentContext {
  task: StepTask;
  watchdog: Watchdog;
  write(text: string | Buffer): void;
  phase(n: number): void;
  /** Reports usage (tokens, dollars) of a model call or message as it is read; a budget it crosses kills the agent at once. */
  usage(u: UsageReport): void;
  /** Why a budget stopped the step (its limit crossed by a report), or null. */
  budgetStop(): string | null;
  spawn(request: SpawnRequest): Promise<SupervisedResult>;
  /** What the agent's stream says of its session: id, final message, usage limit. */
  facts: FactsSink;
}

export type AgentResult =
  | { ok: true; phases: number; exitCode: number | null }
  | {
      ok: false;
      phases: number;
      exitCode: number | null;
      reason: string;
      killedBy?: 'timeout' | 'inactivity' | 'cancel' | 'budget' | 'max_phases';
      /** The agent stopped itself at its own turn limit (claude's error_max_turns). */
      limit?: 'error_max_turns';
    };

export type Backend = (ctx: AgentContext) => Promise<AgentResult>;

/** The last few KiB a program wrote to stderr, to say why it exited. */
export class StderrTail {
  private text = '';
  push(chunk: Buffer): void {
    this.text = (this.text + chunk.toString('utf8')).slice(-4096);
  }
  /** The last line that reads like the reason (an error, a refusal), else the last line; cut to 300 characters. */
  lastLine(): string {
    const lines = this.text.split('\n').map((l) => l.trim()).filter(Boolean);
    const reason = [...lines].reverse().find((l) => /error|cannot|can't|refus|denied|not allowed|invalid|unexpected|must/i.test(l));
    return (reason ?? lines.at(-1) ?? '').slice(0, 300);
  }
  get all(): string {
    return this.text;
  }
}

/** The failure for a program that was killed or exited non-zero, or null when it exited 0; `why` is what it said last. */
export function processFailure(r: SupervisedResult, what: string, phases: number, why = ''): AgentResult | null {
  if (r.spawnError) return { ok: false, phases, exitCode: null, reason: r.spawnError };
  if (r.killedBy) return { ok: false, phases, exitCode: r.exitCode, reason: `${what} killed (${r.killedBy})`, killedBy: r.killedBy };
  if (r.exitCode !== 0) {
    const how = `${what} exited with ${r.exitCode === null ? `signal ${r.signal}` : `code ${r.exitCode}`}`;
    return { ok: false, phases, exitCode: r.exitCode, reason: why ? `${how}: ${why}` : how };
  }
  return null;
}

/** A number from a usage field, or 0. */
export function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

export function keywordHint(keyword: string | undefined): string {
  return keyword ? `\n\nWhen the task is complete, say ${keyword} on a line of its own.` : '';
}
