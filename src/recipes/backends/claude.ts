// Claude Code in print mode with stream-json output. The prompt goes on
// stdin; a phase is an assistant turn, and past max_phases the step is
// stopped (claude 2.1's --help lists no turn limit, so vigil counts them).
// model → --model, permission_mode → --permission-mode, effort → --effort
// where the installed CLI has it, else the thinking budget
// (MAX_THINKING_TOKENS). Claude Code refuses bypassPermissions as root unless
// IS_SANDBOX=1: a `vm` step is a sandbox, so it gets IS_SANDBOX=1.
import { spawnSync } from 'node:child_process';
import { CLAUDE_LOGIN_HELP } from '../preflight/agent-auth.ts';
import { type AgentContext, type AgentResult, num, processFailure, StderrTail } from './agent-context.ts';
import { type ClaudeUsage, ClaudeUsageCounter } from './claude-usage.ts';
import { StreamLines } from './stream-lines.ts';
import { ClaudeSessionWatch, claudeResumeArgs } from '../sessions/agent-session.ts';

const effortSupport = new Map<string, boolean>();

/** Whether this claude takes `--effort` (asked once per executable, from its --help). */
export function claudeHasEffortFlag(command: string): boolean {
  let known = effortSupport.get(command);
  if (known === undefined) {
    const help = spawnSync(command, ['--help'], { encoding: 'utf8', timeout: 10_000, input: '' });
    known = /--effort\b/.test(`${help.stdout ?? ''}${help.stderr ?? ''}`);
    effortSupport.set(command, known);
  }
  return known;
}

export const EFFORT_THINKING_TOKENS: Record<string, string> = { low: '4000', medium: '10000', high: '31999', max: '63999' };

export function claudeArgs(spec: { model?: string; permissionMode?: string; extraArgs: string[]; effort?: string }, effortFlag = false): string[] {
  const args = ['-p', '--output-format', 'stream-json', '--verbose'];
  if (spec.model) args.push('--model', spec.model);
  if (spec.effort && effortFlag) args.push('--effort', spec.effort);
  if (spec.permissionMode) args.push('--permission-mode', spec.permissionMode);
  return [...args, ...spec.extraArgs];
}

interface StreamEvent {
  type?: string;
  subtype?: string;
  is_error?: boolean;
  result?: string;
  num_turns?: number;
  total_cost_usd?: number;
  usage?: ClaudeUsage;
  /** With --json-schema: the validated answer. */
  structured_output?: unknown;
  message?: { id?: string; model?: string; content?: Array<{ type?: string; text?: string; name?: string }>; usage?: ClaudeUsage };
}

export async function runClaude(ctx: AgentContext): Promise<AgentResult> {
  const spec = ctx.task.backend;
  if (spec.kind !== 'claude') throw new Error('runClaude needs a claude backend');
  let phases = 0;
  let result: StreamEvent | null = null;
  let text = '';
  let overLimit = false;
  const controller = new AbortController();
  const counter = new ClaudeUsageCounter(ctx, spec.model ?? null);
  const turns = new Set<string>();
  const session = new ClaudeSessionWatch(ctx.facts);
  // A line not JSON is output; so is one too long to be an event, in pieces (stream-lines.ts).
  const lines = new StreamLines((line) => {
    let event: StreamEvent;
    try {
      event = JSON.parse(line) as StreamEvent;
    } catch {
      ctx.write(`${line}\n`);
      return;
    }
    session.observe(event);
    if (event.type === 'assistant') {
      // Counted as each message comes, so that a budget stops the agent within one message.
      if (event.message?.usage) counter.message(event.message.id, event.message.model, event.message.usage);
      if (overLimit) return;
      // Claude Code writes each content block of one message (text, tool use) as an event of its own: a turn is a message id.
      const id = event.message?.id;
      if (id === undefined || !turns.has(id)) {
        if (id !== undefined) turns.add(id);
        phases += 1;
        if (phases > ctx.task.maxPhases) {
          overLimit = true;
          controller.abort();
          return;
        }
        ctx.phase(phases);
      }
      for (const block of event.message?.content ?? []) {
        if (block.type === 'text' && block.text) {
          text += `${block.text}\n`;
          ctx.write(`${block.text}\n`);
        } else if (block.type === 'tool_use') ctx.write(`[tool ${block.name ?? '?'}]\n`);
      }
    } else if (event.type === 'result') {
      result = event;
      counter.result(event.usage, event.total_cost_usd);
      if (event.result) text += `${event.result}\n`;
      if (event.structured_output !== undefined) ctx.write(`${JSON.stringify(event.structured_output)}\n`);
    }
  }, { overlong: (text) => ctx.write(text) });
  const env: Record<string, string> = {};
  const effortFlag = spec.effort !== undefined && claudeHasEffortFlag(spec.command);
  if (spec.effort && !effortFlag) env.MAX_THINKING_TOKENS = EFFORT_THINKING_TOKENS[spec.effort] ?? '10000';
  if (ctx.task.vm) env.IS_SANDBOX = '1';
  const stderr = new StderrTail();
  const r = await ctx.spawn({
    command: spec.command,
    args: [...claudeArgs(spec, effortFlag), ...claudeResumeArgs(ctx.task.resumeSession), ...(ctx.task.outputSchema ? ['--json-schema', ctx.task.outputSchema.text] : [])],
    stdin: ctx.task.prompt,
    env,
    quiet: true,
    abort: controller.signal,
    onStdout: (chunk) => lines.push(chunk),
    onStderr: (chunk) => stderr.push(chunk),
  });
  lines.end();
  // A claude stopped before its result event reported no cost: what its messages used is priced from vigil.yml.
  if (!result) counter.unreconciled();
  const done = Math.min(phases, ctx.task.maxPhases);
  if (overLimit)
    return { ok: false, phases: done, exitCode: r.exitCode, reason: `max_phases (${ctx.task.maxPhases}) reached before the agent finished`, killedBy: 'max_phases' };
  const final = result as StreamEvent | null;
  const limited = session.stoppedOnLimit(r, !final || final.is_error === true || final.subtype !== 'success', phases, stderr.all);
  if (limited) return limited;
  const failure = processFailure(r, 'claude', phases, whyClaudeExited(stderr, spec.permissionMode, ctx.task.vm !== null));
  // A killed or unstartable agent is reported as such; otherwise the result event says most.
  // Once claude has given its result it has finished: a kill on its way out (the budget its result crossed) changes nothing.
  const finishedFirst = final !== null && (r.killedBy === 'cancel' || r.killedBy === 'budget');
  if (failure && !finishedFirst && (r.killedBy || r.spawnError || !final)) return failure;
  if (!final) return { ok: false, phases, exitCode: r.exitCode, reason: 'claude ended without a result event' };
  if (final.subtype === 'error_max_turns')
    return {
      ok: false,
      phases,
      exitCode: r.exitCode,
      reason: `error_max_turns: claude stopped itself at its own turn limit after ${num(final.num_turns) || phases} turns`,
      limit: 'error_max_turns',
    };
  if (final.is_error || final.subtype !== 'success') {
    const said = (final.result ?? '').trim();
    if (notLoggedIn(said)) return { ok: false, phases, exitCode: r.exitCode, reason: `claude is not logged in ("${said}"): ${CLAUDE_LOGIN_HELP}` };
    const kind = final.subtype && final.subtype !== 'success' ? ` (${final.subtype})` : '';
    return { ok: false, phases, exitCode: r.exitCode, reason: `claude reported an error${kind}${said ? `: ${said}` : ''}` };
  }
  if (failure && !finishedFirst) return failure;
  const keyword = ctx.task.completionKeyword;
  if (keyword && !text.includes(keyword))
    return { ok: false, phases, exitCode: r.exitCode, reason: `the agent finished without the completion keyword "${keyword}"` };
  return { ok: true, phases, exitCode: r.exitCode };
}

/** What claude said last, with the way out when it refused bypassPermissions as root. */
function whyClaudeExited(stderr: StderrTail, permissionMode: string | undefined, vm: boolean): string {
  const said = stderr.lastLine();
  if (permissionMode === 'bypassPermissions' && !vm && /root|sudo/i.test(stderr.all)) {
    return `${said || 'it refused to run'} (Claude Code refuses bypassPermissions as root outside a sandbox: set "vm": true on the step, which runs it in bubblewrap with IS_SANDBOX=1, or run vigil as another user)`;
  }
  return said;
}

/** Whether claude's own words say it has no credentials (print mode says "Not logged in · Please run /login"). */
export function notLoggedIn(said: string): boolean {
  return /not logged in|please run \/login|invalid api key|authentication_failed|OAuth token has expired/i.test(said);
}
