// What the main thread sends to a pool worker to run one step (or the
// canary), and what comes back. Everything here is structured-clone safe.
import type { MessagePort } from 'node:worker_threads';
import type { KillReason } from '../process/process-group.ts';
import type { AgentSessionFacts } from '../sessions/agent-session.ts';

export type BackendSpec =
  | { kind: 'claude'; command: string; model?: string; effort?: string; permissionMode?: string; extraArgs: string[] }
  | { kind: 'codex'; command: string; model?: string; effort?: string; permissionMode?: string; extraArgs: string[] }
  | { kind: 'http'; api: 'openai' | 'anthropic'; provider: string; url: string; apiKey?: string; model: string; maxTokens: number }
  | { kind: 'custom'; provider: string; command: string; args: string[]; model?: string; effort?: string; permissionMode?: string; shell?: true };

export interface VmSpec {
  /** Path of bwrap. */
  bwrap: string;
  /** Directories the sandbox may write (the step's directory). */
  writable: string[];
}

export interface StepTask {
  kind: 'step' | 'canary';
  label: string;
  cwd: string;
  env: Record<string, string>;
  backend: BackendSpec;
  /** The rendered prompt, also given on stdin. */
  prompt: string;
  completionKeyword?: string;
  maxPhases: number;
  timeoutMs: number;
  inactivityMs: number;
  buildCommand?: string;
  /** The step's output_schema: its JSON text and a file holding it (codex and custom programs take a path). */
  outputSchema?: { text: string; file: string };
  vm: VmSpec | null;
  /** Where the step's output is appended while it runs (kept when it is killed). */
  outputFile: string;
  /**
   * The budget counters of the step and of every run around it, innermost first (budget/usage-meter.ts):
   * the reader adds each message's usage to them and kills the agent when one crosses its limit.
   */
  meters?: Array<{ buffer: SharedArrayBuffer; scope: string }>;
  /** vigil.yml `prices`, to price usage the backend reports no cost for. */
  prices?: Record<string, { input_per_mtok: number; output_per_mtok: number; cache_read_per_mtok?: number; cache_write_per_mtok?: number }>;
  /** The agent session to continue (claude --resume, codex exec resume); absent: a new one. */
  resumeSession?: string;
  port: MessagePort;
}

export type WorkerMessage =
  | { type: 'spawned'; pid: number }
  | { type: 'exited'; pid: number }
  | { type: 'phase'; phase: number }
  | { type: 'usage'; usage: UsageReport }
  | { type: 'session'; session: string };

/** Usage a backend reported for one call: tokens, and dollars when the backend knows them (else priced from vigil.yml). */
export interface UsageReport {
  /** Input tokens, those read from and written to a cache included. */
  input_tokens: number;
  output_tokens: number;
  /** Of input_tokens, those read from a cache and those written to it (priced apart when vigil.yml says how). */
  cache_read_tokens?: number;
  cache_write_tokens?: number;
  usd: number | null;
  model: string | null;
  /** The backend reports the cost itself at the end (claude's total_cost_usd): unpriced until then, it counts $0, not unknown. */
  usd_later?: true;
  /** The agent's own final account (claude's result event): counted, but the agent has finished, so a budget it crosses kills nothing. */
  final?: true;
  /** Why this usage has no price, when the generic reason would mislead (claude stopped before it reported its cost). */
  unpriced_why?: string;
}

export type MainMessage = { type: 'cancel' };

export type StepOutcome = (
  | { status: 'succeeded'; phases: number; exitCode: number | null }
  | { status: 'failed'; phases: number; exitCode: number | null; reason: string; /** The agent stopped itself at its own turn limit. */ limit?: 'error_max_turns' }
  | { status: 'killed'; killedBy: Exclude<KillReason, 'cancel'> | 'max_phases'; phases: number; exitCode: number | null; reason: string }
  | { status: 'cancelled'; phases: number; exitCode: number | null; reason: string; /** Its agent never started (its wait for a slot ended). */ notStarted?: true }
) & {
  /**
   * Every usage report of the step, in order. The `usage` messages on the port
   * may arrive after the task's result (two channels): the pool delivers the
   * ones not yet seen from here, so none is lost.
   */
  usage?: UsageReport[];
  /** Whether the step's build_command passed (absent: it did not run). */
  build?: 'passed' | 'failed';
} & AgentSessionFacts;
