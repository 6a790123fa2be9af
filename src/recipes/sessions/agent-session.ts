// What a step learns of its agent's session while it runs: the session
// (claude) or thread (codex) id to continue it with, the agent's final
// message (for a loop's `until: {line: …}`), and whether it stopped on its
// provider's usage limit. The watches read the backends' stream events.
import type { SupervisedResult } from '../process/process-group.ts';
import { claudeUsageLimit, codexUsageLimit, type UsageLimit } from './usage-limit.ts';

export interface AgentSessionFacts {
  /** claude's session_id or codex's thread_id: `claude --resume <id>`, `codex exec resume <id>`. */
  session?: string;
  /** The agent's final message: claude's result, codex's last agent message. */
  finalText?: string;
  /** Set when the agent stopped on its provider's usage limit. */
  usageLimit?: UsageLimit;
}

/** Where a watch reports: the pool worker keeps the facts and sends the session id on at once. */
export type FactsSink = (facts: AgentSessionFacts) => void;

interface LimitFailure {
  ok: false;
  phases: number;
  exitCode: number | null;
  reason: string;
}

/** Claude Code's stream-json: `system init` and `result` carry session_id; a rejected `rate_limit_event` its reset. */
export class ClaudeSessionWatch {
  private session: string | undefined;
  private resultText: string | undefined;
  private lastAssistant = '';
  private rejectedAt: number | null | undefined;

  constructor(private readonly sink: FactsSink) {}

  observe(event: { type?: string; subtype?: string; session_id?: unknown; result?: unknown; rate_limit_info?: unknown; message?: { content?: Array<{ type?: string; text?: string }> } }): void {
    if (typeof event.session_id === 'string' && event.session_id !== this.session) {
      this.session = event.session_id;
      this.sink({ session: this.session });
    }
    if (event.type === 'assistant') {
      const text = (event.message?.content ?? []).filter((b) => b.type === 'text' && b.text).map((b) => b.text).join('\n');
      if (text) this.lastAssistant = text;
      this.sink({ finalText: this.resultText ?? this.lastAssistant });
    } else if (event.type === 'result' && typeof event.result === 'string') {
      this.resultText = event.result;
      this.sink({ finalText: this.resultText });
    } else if (event.type === 'rate_limit_event') {
      const info = event.rate_limit_info as { status?: string; resetsAt?: number } | undefined;
      if (info?.status === 'rejected') this.rejectedAt = typeof info.resetsAt === 'number' ? info.resetsAt * 1000 : null;
    }
  }

  /** The failure to report when claude stopped on its usage limit, else null. */
  stoppedOnLimit(r: SupervisedResult, failedResult: boolean, phases: number, stderr: string): LimitFailure | null {
    if (r.killedBy || r.spawnError || (r.exitCode === 0 && !failedResult)) return null;
    const said = `${this.resultText ?? ''}\n${this.lastAssistant}\n${stderr}`;
    let limit = claudeUsageLimit(said);
    if (!limit && this.rejectedAt !== undefined) limit = { provider: 'claude', resetAt: this.rejectedAt, message: 'rate_limit_event: rejected' };
    if (limit && limit.resetAt === null && this.rejectedAt) limit = { ...limit, resetAt: this.rejectedAt };
    if (!limit) return null;
    this.sink({ usageLimit: limit });
    return { ok: false, phases, exitCode: r.exitCode, reason: `claude stopped on its usage limit: ${limit.message}` };
  }
}

/** codex exec --json: `thread.started` carries thread_id; the limit comes as an `error` or `turn.failed`. */
export class CodexSessionWatch {
  private errors = '';

  constructor(private readonly sink: FactsSink) {}

  observe(event: { type?: string; thread_id?: unknown; message?: string; error?: { message?: string }; item?: { type?: string; text?: string } }): void {
    if (event.type === 'thread.started' && typeof event.thread_id === 'string') this.sink({ session: event.thread_id });
    else if (event.type === 'error' || event.type === 'turn.failed') this.errors += `${event.error?.message ?? event.message ?? ''}\n`;
    else if (event.type === 'item.completed' && event.item?.type === 'agent_message' && event.item.text) this.sink({ finalText: event.item.text });
  }

  stoppedOnLimit(r: SupervisedResult, failed: boolean, phases: number, stderr: string): LimitFailure | null {
    if (r.killedBy || r.spawnError || (r.exitCode === 0 && !failed)) return null;
    const limit = codexUsageLimit(`${this.errors}\n${stderr}`);
    if (!limit) return null;
    this.sink({ usageLimit: limit });
    return { ok: false, phases, exitCode: r.exitCode, reason: `codex stopped on its usage limit: ${limit.message}` };
  }
}

/** claude's arguments to continue a session. */
export function claudeResumeArgs(session: string | undefined): string[] {
  return session ? ['--resume', session] : [];
}

/**
 * `codex exec …` arguments turned into `codex exec resume … <thread> -`.
 * `exec resume` has no --sandbox: the sandbox mode goes as a config value.
 */
export function codexResumeArgs(args: string[], thread: string | undefined): string[] {
  if (!thread) return args;
  const out = ['exec', 'resume'];
  for (let i = 1; i < args.length - 1; i += 1) {
    if (args[i] === '--sandbox') {
      out.push('-c', `sandbox_mode="${args[i + 1]}"`);
      i += 1;
    } else out.push(args[i]!);
  }
  return [...out, thread, '-'];
}
