// The run record: .vigil/runs/<run-id>/run.json (rewritten atomically after
// state changes: at once for a run's start and end and a step's start or gate,
// within a moment for the rest), events.jsonl (one line per change, appended
// at once) and each step's output. This is what `vigil runs`, `vigil gate` and
// `--from` read.

import { randomBytes } from 'node:crypto';
import { appendFileSync, closeSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Listeners } from '../../events/listeners.ts';
import { writeJsonAtomic } from '../../json/json-file.ts';

export type StepStatus =
  | 'pending'
  | 'running'
  | 'awaiting_gate'
  | 'succeeded'
  | 'failed'
  | 'killed'
  | 'conflict'
  | 'skipped'
  | 'cancelled'
  | 'reused';

/** `fenced`: a reaction stopped because the lease it ran under was lost (docs/triggers.md). */
export type RunStatus = 'running' | 'succeeded' | 'failed' | 'cancelled' | 'interrupted' | 'over_budget' | 'fenced';

/** One child run of a composite run (or an entry that did not run: `skipped`, `conflict` after a failed merge-back). */
export interface ChildRecord {
  role: string;
  name: string;
  run_id: string | null;
  status: RunStatus | 'pending' | 'skipped' | 'conflict';
  started: string | null;
  ended: string | null;
  vars: Record<string, string>;
  workspace: string | null;
  reason?: string;
  /** Type-specific facts: merge result and branch, verdict, score. */
  result?: Record<string, unknown>;
}

export interface UsageRecord {
  input_tokens: number;
  output_tokens: number;
  /** Dollars of the usage that could be priced. */
  usd: number;
  /** Set when some usage could not be priced: `usd` undercounts. */
  usd_unknown?: true;
  /** What the run it resumes had spent (--resume): counted in the totals above and in the budget. */
  carried?: { run: string; input_tokens: number; output_tokens: number; usd: number; usd_unknown?: true };
  /** Usage per step label (of this run only; children have their own records); `canary` is the canary's. */
  by_step: Record<string, { input_tokens: number; output_tokens: number; usd: number; usd_unknown?: true }>;
}

export interface GateRecord {
  options: string[];
  default_action: string | null;
  choice?: string;
  chosen_by?: 'terminal' | 'command' | 'gate_action';
}

export interface StepRecord {
  label: string;
  status: StepStatus;
  backend: string;
  needs: string[];
  wave: number | null;
  phase: number;
  phases: number;
  exit_code: number | null;
  started: string | null;
  ended: string | null;
  /** Path relative to the run directory; absent when the output was kept inline. */
  output_file: string | null;
  output?: string;
  output_bytes: number;
  prompt_files: string[];
  reason?: string;
  /** The limit that stopped the step: a budget's tokens or usd, its minutes, vigil's max_phases, a watchdog, or the agent's own turn limit (a failed step). */
  killed_by?: 'timeout' | 'inactivity' | 'budget' | 'minutes' | 'max_phases' | 'error_max_turns';
  /**
   * The step's own budget reached (its reason): with `killed_by` when the kill stopped it, alone when
   * the agent had finished before its last report crossed the limit (the step stands). Either way the
   * run ends over_budget.
   */
  budget_reached?: string;
  /** Where the last attempt's output starts in the step's log (a retried step keeps every attempt's). */
  attempt_offset?: number;
  usage?: { input_tokens: number; output_tokens: number; usd: number; usd_unknown?: true };
  gate?: GateRecord;
  merge?: { branch: string; result: 'merged' | 'nothing-to-merge' | 'conflict'; detail?: string };
  /** Set while the step waits for a slot of a concurrency cap: "waiting for a claude slot: 2 of 2 held by …". */
  slot_wait?: string | null;
  /** Tries made when the step has `retry` (1 when the first succeeded). */
  attempts?: number;
  /** The step failed but has continue_on_error: its dependents went on. */
  continued?: boolean;
  /** The step's structured output (output_schema), validated. */
  json?: unknown;
  /** The agent's session (claude) or thread (codex) id: retries, loop iterations and resumed runs continue it. */
  session_id?: string;
  /** A step with `loop`: its iterations so far and why it stopped (loop/iterations.ts). */
  loop?: LoopRecord;
  /** Set while the step waits for its provider's usage limit to reset. */
  waiting?: { for: 'usage_limit'; provider: string; until: string; message: string } | null;
}

export interface LoopRecord {
  iteration: number;
  max_iterations: number;
  /** What the loop waits for, in words. */
  until: string;
  /** Why the loop stopped; absent while it runs. */
  stopped?: string;
  iterations: Array<{
    n: number;
    status: string;
    reason?: string;
    build?: 'passed' | 'failed';
    usage: { input_tokens: number; output_tokens: number; usd: number; usd_unknown?: true };
    ended: string;
  }>;
}

export interface RunJson {
  id: string;
  recipe: string;
  recipe_file: string;
  type: string;
  status: RunStatus;
  pid: number;
  started: string;
  ended: string | null;
  project_root: string;
  workspace: string;
  transfer_mode: string;
  vars: string[];
  resumed_from: string | null;
  from_label: string | null;
  reason?: string;
  /** The run that started this one (a composite whose child it is, or a trigger's firing), and its role in a composite. */
  parent?: string | null;
  role?: string | null;
  /** Child runs of a composite run, in the order they were started or listed. */
  children?: ChildRecord[];
  usage?: UsageRecord;
  budget?: { usd?: number; tokens?: number; minutes?: number };
  /** output.txt in the run folder, when the run produced an output. */
  output_file?: string | null;
  /** A parallel, adversarial or convergent run in git: what became of its branch vigil/<run> (merged, or where it is and how to merge it). */
  results?: string;
  /** What started the run: `temporal:<name>` or `sentinel:<name>:<seq>`; absent for runs started by hand. */
  trigger?: string;
  steps: StepRecord[];
}

// The ids this process gave out in the current second: a wide composite prepares hundreds of children in
// one, and two of 500 draws of two random bytes are more likely than not to meet (their records would share
// a folder).
let issuedIn = '';
const issued = new Set<string>();

export function newRunId(now = new Date()): string {
  const iso = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  if (iso !== issuedIn) {
    issued.clear();
    issuedIn = iso;
  }
  if (issued.size >= 0x10000) throw new Error(`more than 65,536 runs started in the second ${iso}`);
  for (;;) {
    const id = `${iso}-${randomBytes(2).toString('hex')}`;
    if (issued.has(id)) continue;
    issued.add(id);
    return id;
  }
}

export function runsDir(projectRoot: string): string {
  return join(projectRoot, '.vigil', 'runs');
}

/** The folder a run's record is made in before it is renamed to the run's id: hidden, and naming its maker. */
export function stagingName(runId: string, pid: number): string {
  return `.${runId}.${pid}.new`;
}

/** The pid of the process that made a staging folder of `stagingName`, or null for any other name. */
export function stagingMaker(name: string): number | null {
  const m = /^\.[^/]+\.(\d+)\.new$/.exec(name);
  return m ? Number(m[1]) : null;
}

export function readRunJson(dir: string): RunJson {
  return JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as RunJson;
}

/** What a run's recorder tells its listeners. */
export interface RunRecorderListener {
  /** A line was written to the run's events.jsonl (with its time and run id). */
  event: (line: Record<string, unknown>) => void;
}

export class RunRecorder {
  readonly dir: string;
  readonly run: RunJson;
  private readonly listeners = new Listeners<RunRecorderListener>();

  constructor(projectRoot: string, run: RunJson) {
    this.dir = join(runsDir(projectRoot), run.id);
    this.run = run;
    // Made under a staging name and renamed into place, so that a runner killed right here leaves no run
    // folder without its run.json (the next run sweeps the staging folder). steps/ now; prompts/ when a run
    // has prompt files and gates/ when a step waits at its gate (a directory more per child of a wide run otherwise).
    const staging = join(runsDir(projectRoot), stagingName(run.id, process.pid));
    mkdirSync(join(staging, 'steps'), { recursive: true });
    writeJsonAtomic(join(staging, 'run.json'), run);
    renameSync(staging, this.dir);
    this.event({ type: 'run.started', recipe: run.recipe, steps: run.steps.map((s) => s.label) });
  }

  /** Calls `listener` on each `event` (RunRecorderListener); returns the function that stops it. */
  on<E extends keyof RunRecorderListener>(event: E, listener: RunRecorderListener[E]): () => void {
    return this.listeners.on(event, listener);
  }

  off<E extends keyof RunRecorderListener>(event: E, listener: RunRecorderListener[E]): void {
    this.listeners.off(event, listener);
  }

  step(label: string): StepRecord {
    const s = this.run.steps.find((x) => x.label === label);
    if (!s) throw new Error(`no step ${label} in run ${this.run.id}`);
    return s;
  }

  /** Applies a change to a step, rewrites run.json and appends an event. */
  updateStep(label: string, patch: Partial<StepRecord>, event?: Record<string, unknown>): void {
    Object.assign(this.step(label), patch);
    if (patch.status === 'awaiting_gate') mkdirSync(join(this.dir, 'gates'), { recursive: true });
    // A step that starts or waits at its gate is written at once (vigil gate and watchers act on it). A step's end
    // can wait a moment: the run's own end writes at once, and events.jsonl already holds the change.
    if (patch.status === 'running' || patch.status === 'awaiting_gate') this.flush();
    else this.flushSoon();
    this.event({ type: 'step.changed', step: label, ...stripOutput(patch), ...(event ?? {}) });
  }

  /** Applies a change to the run itself (usage, output) and rewrites run.json, at once or within a moment. */
  updateRun(patch: Partial<RunJson>, soon = false): void {
    Object.assign(this.run, patch);
    if (soon) this.flushSoon();
    else this.flush();
  }

  /** Adds or changes a child of a composite run, by role. */
  updateChild(role: string, patch: Partial<ChildRecord> & { name?: string }): ChildRecord {
    if (!this.run.children) this.run.children = [];
    const children = this.run.children;
    // By role through a map: a composite 500 wide changes its children thousands of times.
    if (this.byRole.size !== children.length) this.byRole = new Map(children.map((c) => [c.role, c]));
    let child = this.byRole.get(role);
    if (!child) {
      child = { role, name: patch.name ?? '', run_id: null, status: 'pending', started: null, ended: null, vars: {}, workspace: null };
      children.push(child);
      this.byRole.set(role, child);
    }
    Object.assign(child, patch);
    // A wide composite changes its children hundreds of times: one rewrite per moment, not per change.
    this.flushSoon();
    this.event({ type: 'child.changed', role, ...patch });
    return child;
  }

  /** Marks what still runs or waits cancelled with `reason` (a second signal stops the run at once; finish follows). */
  cancelUnfinished(reason: string): void {
    for (const s of this.run.steps) if (s.status === 'running' || s.status === 'pending' || s.status === 'awaiting_gate') Object.assign(s, { status: 'cancelled', reason });
    for (const c of this.run.children ?? []) if (c.status === 'running' || c.status === 'pending') Object.assign(c, { status: 'cancelled', reason });
  }

  finish(status: RunStatus, reason?: string): void {
    this.run.status = status;
    this.run.ended = new Date().toISOString();
    if (reason) this.run.reason = reason;
    this.flush();
    this.event({ type: 'run.ended', status, ...(reason ? { reason } : {}) });
    this.ended = true;
    if (this.events !== null) closeSync(this.events);
    this.events = null;
  }

  event(event: Record<string, unknown>): void {
    const line = { time: new Date().toISOString(), run: this.run.id, ...event };
    const text = `${JSON.stringify(line)}\n`;
    // One descriptor (O_APPEND) while the run lives rather than an open and close per line.
    if (this.ended) appendFileSync(join(this.dir, 'events.jsonl'), text);
    else {
      this.events ??= openSync(join(this.dir, 'events.jsonl'), 'a');
      writeSync(this.events, text);
    }
    this.listeners.emit('event', line);
  }

  private timer: NodeJS.Timeout | null = null;
  private events: number | null = null;
  private ended = false;
  private byRole = new Map<string, ChildRecord>();

  /**
   * Rewrites run.json within a moment, once for all the changes made meanwhile:
   * 50 ms, and 1 ms more per child (to a second), so that a composite with
   * hundreds of children does not rewrite its whole list of them every 50 ms.
   */
  flushSoon(): void {
    this.timer ??= setTimeout(() => this.flush(), Math.min(1000, 50 + (this.run.children?.length ?? 0)));
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    writeJsonAtomic(join(this.dir, 'run.json'), this.run);
  }
}

function stripOutput(patch: Partial<StepRecord>): Partial<StepRecord> {
  const { output: _output, ...rest } = patch;
  return rest;
}
