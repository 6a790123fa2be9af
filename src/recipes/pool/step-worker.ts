// Runs one step inside a piscina worker thread: the backend's phase loop,
// then the build command, under one watchdog. The main thread cancels by
// posting {type: 'cancel'} on the task's port (never by aborting the piscina
// task, which would orphan the agent's process group).
import { closeSync, openSync, writeSync } from 'node:fs';
import { linkedSignal } from '../../timing/linked-signal.ts';
import type { AgentContext, AgentResult, Backend, SpawnRequest } from '../backends/agent-context.ts';
import { runClaude } from '../backends/claude.ts';
import { runCodex } from '../backends/codex.ts';
import { runCustom } from '../backends/custom.ts';
import { runHttpChat } from '../backends/http-chat.ts';
import { describeReached, meterReport } from '../budget/usage-meter.ts';
import { sandboxCommand } from '../isolation/vm.ts';
import { createWatchdog, runSupervised } from '../process/process-group.ts';
import type { AgentSessionFacts } from '../sessions/agent-session.ts';
import type { MainMessage, StepOutcome, StepTask, UsageReport, WorkerMessage } from './step-task.ts';

const backends: Record<StepTask['backend']['kind'], Backend> = {
  claude: runClaude,
  codex: runCodex,
  http: runHttpChat,
  custom: runCustom,
};

export default async function runStepTask(task: StepTask): Promise<StepOutcome> {
  const cancel = new AbortController();
  const post = (m: WorkerMessage): void => task.port.postMessage(m);
  task.port.on('message', (m: MainMessage) => {
    if (m.type === 'cancel') cancel.abort();
  });
  const fd = openSync(task.outputFile, 'a');
  const reports: UsageReport[] = [];
  // A budget crossed by a report kills the agent's group at once, from this thread.
  const budget = new AbortController();
  let budgetStop: string | null = null;
  const facts: AgentSessionFacts = {};
  const watchdog = createWatchdog(task.timeoutMs, task.inactivityMs, cancel.signal);
  // A thread runs many steps: once this step's file is closed its descriptor
  // may already belong to another step's file, so late output is dropped.
  let closed = false;
  const write = (text: string | Buffer): void => {
    if (closed) return;
    if (typeof text === 'string') writeSync(fd, text);
    else writeSync(fd, text);
  };
  const spawn = (req: SpawnRequest) => {
    const wrapped = sandboxCommand(task.vm, task.cwd, req.command, req.args);
    const linked = req.abort ? linkedSignal([cancel.signal, req.abort]) : null;
    const signal = linked?.signal ?? cancel.signal;
    const running = runSupervised(
      {
        command: wrapped.command,
        args: wrapped.args,
        cwd: task.cwd,
        env: { ...task.env, ...(req.env ?? {}) },
        ...(req.stdin !== undefined ? { stdin: req.stdin } : {}),
        onOutput: (chunk, stream) => {
          if (stream === 'stdout') req.onStdout?.(chunk);
          else req.onStderr?.(chunk);
          if (stream === 'stderr' || !req.quiet) write(chunk);
        },
        onSpawn: (pid) => post({ type: 'spawned', pid }),
        onExit: (pid) => post({ type: 'exited', pid }),
        budget: budget.signal,
      },
      { ...watchdog, signal },
    );
    return linked ? running.finally(() => linked.dispose()) : running;
  };
  const ctx: AgentContext = {
    task,
    watchdog,
    write,
    phase: (phase) => post({ type: 'phase', phase }),
    usage: (usage) => {
      reports.push(usage);
      const reached = task.meters ? meterReport(task.meters, usage, task.prices) : null;
      post({ type: 'usage', usage });
      if (reached && !budgetStop && !usage.final) {
        budgetStop = describeReached(reached);
        budget.abort();
      }
    },
    budgetStop: () => budgetStop,
    spawn,
    facts: (f) => {
      if (f.session && f.session !== facts.session) post({ type: 'session', session: f.session });
      Object.assign(facts, f);
    },
  };
  try {
    let result: AgentResult = await backends[task.backend.kind](ctx);
    if (!result.ok && budgetStop && result.killedBy !== 'timeout' && result.killedBy !== 'inactivity') result = { ...result, killedBy: 'budget', reason: budgetStop };
    let build: StepOutcome['build'];
    if (result.ok && task.buildCommand && task.kind === 'step') {
      write(`\n$ ${task.buildCommand}\n`);
      const r = await spawn({ command: '/bin/sh', args: ['-c', task.buildCommand] });
      if (r.killedBy) result = { ok: false, phases: result.phases, exitCode: r.exitCode, reason: 'build_command killed', killedBy: r.killedBy };
      else if (r.spawnError || r.exitCode !== 0)
        result = {
          ok: false,
          phases: result.phases,
          exitCode: r.exitCode,
          reason: r.spawnError ?? `build_command exited with ${r.exitCode === null ? `signal ${r.signal}` : `code ${r.exitCode}`}`,
        };
      build = r.killedBy ? undefined : result.ok ? 'passed' : 'failed';
    }
    return { ...toOutcome(result, task), usage: reports, ...facts, ...(build ? { build } : {}) };
  } catch (error) {
    return { status: 'failed', phases: 0, exitCode: null, reason: `internal error: ${(error as Error).message}`, usage: reports, ...facts };
  } finally {
    closed = true;
    closeSync(fd);
    task.port.close();
  }
}

function toOutcome(r: AgentResult, task: StepTask): StepOutcome {
  if (r.ok) return { status: 'succeeded', phases: r.phases, exitCode: r.exitCode };
  if (r.killedBy === 'cancel') return { status: 'cancelled', phases: r.phases, exitCode: r.exitCode, reason: 'cancelled' };
  if (r.killedBy === 'budget' || r.killedBy === 'max_phases') return { status: 'killed', killedBy: r.killedBy, phases: r.phases, exitCode: r.exitCode, reason: r.reason };
  if (r.limit) return { status: 'failed', phases: r.phases, exitCode: r.exitCode, reason: r.reason, limit: r.limit };
  if (r.killedBy === 'timeout')
    return { status: 'killed', killedBy: 'timeout', phases: r.phases, exitCode: r.exitCode, reason: `watchdog: no completion within timeout (${task.timeoutMs / 1000} s)` };
  if (r.killedBy === 'inactivity')
    return { status: 'killed', killedBy: 'inactivity', phases: r.phases, exitCode: r.exitCode, reason: `watchdog: no output for ${task.inactivityMs / 1000} s` };
  return { status: 'failed', phases: r.phases, exitCode: r.exitCode, reason: r.reason };
}
