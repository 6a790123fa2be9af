// Codex in exec mode with JSON-lines output (`codex exec --json -`, prompt on
// stdin). `codex exec` runs one turn (turn.started comes once), so a phase
// is an action the agent takes inside it: a command, a file change, an MCP or
// collaboration tool call, a web search (each an item of its own); a reply
// with no action is one phase. Past max_phases the step is stopped.
// codex-cli 0.171 has no --full-auto: acceptEdits is `--sandbox
// workspace-write`. An `error` event is often transient (a stream retry): it
// fails nothing by itself; turn.failed or a non-zero exit does, and the
// reason is codex's own error, not a warning it printed on the way.

import { CODEX_LOGIN_HELP } from '../preflight/agent-auth.ts';
import { type AgentContext, type AgentResult, num, processFailure, StderrTail } from './agent-context.ts';
import { StreamLines } from './stream-lines.ts';
import { CodexSessionWatch, codexResumeArgs } from '../sessions/agent-session.ts';

const ACTIONS = new Set(['command_execution', 'file_change', 'mcp_tool_call', 'collab_tool_call', 'web_search']);

/** codex's own error from its stderr: its warnings ("WARNING: proceeding, …") and log lines are not why it failed. */
export function codexStderrReason(stderr: StderrTail): string {
  const lines = stderr.all.split('\n').map((l) => l.trim()).filter((l) => l && !/^WARNING\b/.test(l) && !/^\d{4}-\d\d-\d\dT\S+\s+(WARN|INFO|DEBUG|TRACE)\b/.test(l));
  const error = [...lines].reverse().find((l) => /^error\b|^Error:|\bERROR\b|not logged in|no prompt provided/i.test(l));
  return (error ?? lines.at(-1) ?? '').replace(/^\d{4}-\d\d-\d\dT\S+\s+ERROR\s+/, '').slice(0, 300);
}

/** codex's reason, with what to do when it says it has no (valid) credentials. */
function withLoginHelp(reason: string): string {
  return /not logged in|unauthorized|\b401\b|invalid api key|incorrect api key|missing bearer/i.test(reason) ? `${reason} (codex has no valid credentials: ${CODEX_LOGIN_HELP})` : reason;
}

export function codexArgs(spec: { model?: string; effort?: string; permissionMode?: string; extraArgs: string[] }): string[] {
  const args = ['exec', '--json', '--skip-git-repo-check'];
  if (spec.model) args.push('--model', spec.model);
  if (spec.effort) args.push('-c', `model_reasoning_effort="${spec.effort === 'max' ? 'high' : spec.effort}"`);
  if (spec.permissionMode === 'bypassPermissions') args.push('--dangerously-bypass-approvals-and-sandbox');
  else if (spec.permissionMode === 'acceptEdits') args.push('--sandbox', 'workspace-write');
  return [...args, ...spec.extraArgs, '-'];
}

interface CodexEvent {
  type?: string;
  item?: { id?: string; type?: string; text?: string; command?: string; message?: string };
  error?: { message?: string };
  message?: string;
  usage?: { input_tokens?: number; cached_input_tokens?: number; output_tokens?: number };
}

export async function runCodex(ctx: AgentContext): Promise<AgentResult> {
  const spec = ctx.task.backend;
  if (spec.kind !== 'codex') throw new Error('runCodex needs a codex backend');
  let phases = 0;
  let text = '';
  let failed: string | null = null;
  let lastError = '';
  let overLimit = false;
  let turnEnded = false;
  let replied = false;
  const actions = new Set<string>();
  const controller = new AbortController();
  const stderr = new StderrTail();
  const session = new CodexSessionWatch(ctx.facts);
  // A line not JSON is output; so is one too long to be an event, in pieces (stream-lines.ts).
  const lines = new StreamLines((line) => {
    let event: CodexEvent;
    try {
      event = JSON.parse(line) as CodexEvent;
    } catch {
      ctx.write(`${line}\n`);
      return;
    }
    session.observe(event);
    if (event.type === 'turn.started') turnEnded = replied = false;
    else if (event.type === 'turn.completed') turnEnded = true;
    else if (event.type === 'item.completed' && event.item?.type === 'agent_message') replied = true;
    if (event.type === 'turn.started') {
      if (phases === 0) {
        phases = 1;
        ctx.phase(1);
      }
    } else if ((event.type === 'item.started' || event.type === 'item.completed') && ACTIONS.has(event.item?.type ?? '')) {
      const id = event.item?.id ?? `#${actions.size}`;
      if (!actions.has(id)) {
        actions.add(id);
        if (actions.size > ctx.task.maxPhases) {
          if (!overLimit) controller.abort();
          overLimit = true;
        } else if (actions.size > phases) {
          phases = actions.size;
          ctx.phase(phases);
        }
      }
    }
    if (event.type === 'item.completed') {
      if (event.item?.type === 'agent_message' && event.item.text) {
        text += `${event.item.text}\n`;
        ctx.write(`${event.item.text}\n`);
      } else if (event.item?.type === 'command_execution') ctx.write(`[command ${event.item.command ?? ''}]\n`);
      else if (event.item?.type === 'error' && event.item.message) ctx.write(`[codex: ${event.item.message}]\n`);
    } else if (event.type === 'turn.completed' && event.usage) {
      // codex counts cached input inside input_tokens.
      ctx.usage({
        input_tokens: num(event.usage.input_tokens),
        output_tokens: num(event.usage.output_tokens),
        cache_read_tokens: Math.min(num(event.usage.cached_input_tokens), num(event.usage.input_tokens)),
        usd: null,
        model: spec.model ?? null,
      });
    } else if (event.type === 'turn.failed') {
      failed = event.error?.message ?? event.message ?? 'codex reported a failed turn';
    } else if (event.type === 'error') {
      lastError = event.error?.message ?? event.message ?? 'codex reported an error';
      ctx.write(`[codex error: ${lastError}]\n`);
    }
  }, { overlong: (text) => ctx.write(text) });
  const args = codexArgs(spec);
  // Before the final `-` (the prompt on stdin).
  if (ctx.task.outputSchema) args.splice(args.length - 1, 0, '--output-schema', ctx.task.outputSchema.file);
  const r = await ctx.spawn({
    command: spec.command,
    args: codexResumeArgs(args, ctx.task.resumeSession),
    stdin: ctx.task.prompt,
    quiet: true,
    abort: controller.signal,
    onStdout: (c) => lines.push(c),
    onStderr: (c) => stderr.push(c),
  });
  lines.end();
  const done = Math.min(phases, ctx.task.maxPhases);
  if (overLimit)
    return { ok: false, phases: done, exitCode: r.exitCode, reason: `max_phases (${ctx.task.maxPhases}) reached before the agent finished`, killedBy: 'max_phases' };
  const limited = session.stoppedOnLimit(r, failed !== null, done, stderr.all);
  if (limited) return limited;
  // A turn that completed with the agent's reply is codex's end (exec runs one turn): a kill on its way
  // out (the budget its turn.completed crossed, the run stopping after it) changes nothing.
  const finishedFirst = turnEnded && replied && failed === null && (r.killedBy === 'budget' || r.killedBy === 'cancel');
  const failure = finishedFirst ? null : processFailure(r, 'codex', done, withLoginHelp(failed ?? (lastError || codexStderrReason(stderr))));
  if (failure) return failure;
  if (failed) return { ok: false, phases: done, exitCode: r.exitCode, reason: withLoginHelp(failed) };
  const keyword = ctx.task.completionKeyword;
  if (keyword && !text.includes(keyword))
    return { ok: false, phases: done, exitCode: r.exitCode, reason: `the agent finished without the completion keyword "${keyword}"` };
  return { ok: true, phases: done, exitCode: r.exitCode };
}
