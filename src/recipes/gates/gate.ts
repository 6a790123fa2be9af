// Review gates. A step with `gate: review` pauses after it succeeds until a
// person picks one of its options: at a terminal prompt (when the run has a
// terminal) or with `vigil gate <run-id> <label> <option>` from anywhere,
// which drops an answer file into the run record. A run without a terminal
// applies `gate_action` at once; with neither, it waits for `vigil gate`.
// With a terminal, `gate_timeout` seconds without an answer apply
// `gate_action` too, so an unattended terminal does not hold the run.
import { existsSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { writeJsonAtomic } from '../../json/json-file.ts';

export type GateVerdict = 'approve' | 'reject' | 'retry';

const REJECT = new Set(['reject', 'abort', 'stop', 'fail', 'deny', 'no', 'cancel']);
const RETRY = new Set(['retry', 'redo', 'again']);

/** What an option does: reject-like options fail the step, retry-like ones run it again, anything else continues. */
export function gateVerdict(option: string): GateVerdict {
  const o = option.toLowerCase();
  if (REJECT.has(o)) return 'reject';
  if (RETRY.has(o)) return 'retry';
  return 'approve';
}

export interface GateRequest {
  runId: string;
  runDir: string;
  label: string;
  /** Where the step's work can be inspected. */
  dir: string;
  options: string[];
  defaultAction: string | null;
  /** Seconds to wait for an answer before defaultAction applies (a terminal prompt too). */
  timeoutSeconds?: number;
  signal: AbortSignal;
}

export interface GateChoice {
  choice: string;
  by: 'terminal' | 'command' | 'gate_action';
}

export function gateAnswerFile(runDir: string, label: string): string {
  return join(runDir, 'gates', `${label}.json`);
}

export function writeGateAnswer(runDir: string, label: string, option: string): void {
  writeJsonAtomic(gateAnswerFile(runDir, label), { option, time: new Date().toISOString(), pid: process.pid });
}

export interface GateIo {
  interactive: boolean;
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** Called around a terminal prompt so the live view stops redrawing. */
  pause(): void;
  resume(): void;
  note(line: string): void;
}

export class GateKeeper {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly io: GateIo) {}

  decide(req: GateRequest): Promise<GateChoice | null> {
    if (!this.io.interactive && req.defaultAction) return Promise.resolve({ choice: req.defaultAction, by: 'gate_action' });
    this.io.note(
      `step "${req.label}" waits at its review gate (its work is in ${req.dir}); answer with: vigil gate ${req.runId} ${req.label} <${req.options.join('|')}>`,
    );
    if (!this.io.interactive) return this.waitForFile(req, null);
    // One terminal prompt at a time; answers by command are honoured meanwhile.
    const fileAbort = new AbortController();
    const next = this.queue.then(() => this.race(req, fileAbort));
    this.queue = next.catch(() => {});
    return next;
  }

  private async race(req: GateRequest, fileAbort: AbortController): Promise<GateChoice | null> {
    const promptAbort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const fromTimeout =
      req.defaultAction && req.timeoutSeconds !== undefined
        ? new Promise<GateChoice>((resolveTimeout) => {
            const choice = req.defaultAction!;
            const seconds = req.timeoutSeconds!;
            timer = setTimeout(() => {
              this.io.output.write(`\nno answer within gate_timeout (${seconds} s): applying gate_action "${choice}"\n`);
              promptAbort.abort();
              fileAbort.abort();
              resolveTimeout({ choice, by: 'gate_action' });
            }, seconds * 1000);
          })
        : new Promise<never>(() => {});
    const fromFile = this.waitForFile(req, fileAbort.signal).then((c) => {
      promptAbort.abort();
      return c;
    });
    const fromPrompt = this.prompt(req, promptAbort.signal).then((c) => {
      if (c) fileAbort.abort();
      return c;
    });
    try {
      // A cancelled run answers nothing (null), even with a timeout pending.
      const orTimeout = (c: GateChoice | null) => (c !== null || req.signal.aborted ? c : fromTimeout);
      return await Promise.race([fromTimeout, fromFile.then(orTimeout), fromPrompt.then((c) => c ?? fromFile.then(orTimeout))]);
    } finally {
      clearTimeout(timer);
    }
  }

  private prompt(req: GateRequest, signal: AbortSignal): Promise<GateChoice | null> {
    return new Promise((resolvePromise) => {
      this.io.pause();
      const rl = createInterface({ input: this.io.input, output: this.io.output, terminal: true });
      // In raw mode Ctrl-C reaches readline, not the process: pass it on so the run is cancelled.
      rl.on('SIGINT', () => process.kill(process.pid, 'SIGINT'));
      const done = (c: GateChoice | null): void => {
        rl.close();
        this.io.resume();
        req.signal.removeEventListener('abort', stop);
        signal.removeEventListener('abort', stop);
        resolvePromise(c);
      };
      const stop = (): void => done(null);
      req.signal.addEventListener('abort', stop);
      signal.addEventListener('abort', stop);
      const def = req.defaultAction ? ` [${req.defaultAction}]` : '';
      const ask = (): void => {
        rl.question(`\nReview gate for "${req.label}": choose ${req.options.join(' / ')}${def}: `, (answer) => {
          const a = answer.trim() || req.defaultAction || '';
          if (req.options.includes(a)) done({ choice: a, by: 'terminal' });
          else {
            this.io.output.write(`"${a}" is not an option; options: ${req.options.join(', ')}\n`);
            ask();
          }
        });
      };
      ask();
    });
  }

  private waitForFile(req: GateRequest, extra: AbortSignal | null): Promise<GateChoice | null> {
    const file = gateAnswerFile(req.runDir, req.label);
    return new Promise((resolvePromise) => {
      const timer = setInterval(() => {
        if (req.signal.aborted || extra?.aborted) {
          clearInterval(timer);
          resolvePromise(null);
          return;
        }
        if (!existsSync(file)) return;
        try {
          const { option } = JSON.parse(readFileSync(file, 'utf8')) as { option: string };
          unlinkSync(file);
          if (!req.options.includes(option)) return;
          clearInterval(timer);
          resolvePromise({ choice: option, by: 'command' });
        } catch {
          // half-written or already consumed; look again next tick
        }
      }, 150);
    });
  }
}
