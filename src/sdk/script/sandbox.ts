// Runs one compiled script in an isolated-vm isolate (its own V8 heap with a
// memory limit; no Node APIs at all) and answers its SDK calls on the host.
// The script's promise, a wall-clock timeout and the isolate's own death
// (memory limit) race; whatever happens, MCP clients and running sequences
// are closed before the result is returned.
import ivm from 'isolated-vm';
import type { Clock } from '../../actors/clock.ts';
import { asVigilError, VigilError } from '../../errors/vigil-error.ts';
import { BOOTSTRAP } from './bootstrap.ts';
import { ENTRY } from './compile.ts';

export type HostCall = (ns: string, method: string, args: unknown[]) => unknown;
export type HostAsync = (id: string, tool: string, args: unknown) => Promise<unknown>;

export interface SandboxInput {
  code: string;
  file: string;
  manifest: Record<string, string[]>;
  vars: Record<string, string>;
  workspace: string;
  call: HostCall;
  serverCall: HostAsync;
  log: (level: 'log' | 'warn' | 'error', line: string) => void;
  timeoutMs: number;
  memoryMb: number;
  /**
   * Aborted when the script must stop: by its timeout, or from outside with the signal's name as the reason
   * (the script then ends `stopped`). Long host calls cancel their work.
   */
  abort: AbortController;
  /** Times the script's sleeps and its timeout: the wall clock unless a test moves one by hand. */
  clock?: Clock;
}

export type SandboxOutcome =
  | { kind: 'returned'; json: string }
  | { kind: 'threw'; error: { name?: string; code?: string; message: string; details?: unknown; stack?: string } }
  | { kind: 'timeout' }
  | { kind: 'stopped'; signal: string }
  | { kind: 'crashed'; message: string };

export const SLEEP_CAP_MS = 30_000;

/** Node's own timers: a sleeping script keeps the process alive. */
const wallClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

const reply = async (work: () => unknown): Promise<string> => {
  try {
    const value = await work();
    return JSON.stringify({ ok: value });
  } catch (error) {
    return JSON.stringify({ error: asVigilError(error).toJSON() });
  }
};

export async function runInSandbox(input: SandboxInput): Promise<SandboxOutcome> {
  const isolate = new ivm.Isolate({ memoryLimit: input.memoryMb });
  const clock = input.clock ?? wallClock;
  let timer: unknown;
  try {
    const context = await isolate.createContext();
    const g = context.global;
    await g.set('globalThis', g.derefInto());
    await g.set('__vigil_manifest', JSON.stringify(input.manifest));
    await g.set('__vigil_values', JSON.stringify({ vars: input.vars, workspace: input.workspace }));
    await g.set('__vigil_log', new ivm.Reference((level: 'log' | 'warn' | 'error', line: string) => input.log(level, String(line))));
    await g.set(
      '__vigil_host',
      new ivm.Reference((ns: string, method: string, argsJson: string) => reply(() => input.call(ns, method, JSON.parse(argsJson) as unknown[]))),
    );
    await g.set(
      '__vigil_host_async',
      new ivm.Reference((id: string, tool: string, argsJson: string) =>
        reply(async () => {
          if (id === '__sleep') {
            const ms = Math.min(Math.max(0, Number(JSON.parse(argsJson)) || 0), SLEEP_CAP_MS);
            await new Promise((r) => clock.setTimeout(() => r(undefined), ms));
            return null;
          }
          return input.serverCall(id, tool, JSON.parse(argsJson));
        }),
      ),
    );
    await context.eval(BOOTSTRAP, { filename: 'vigil:bootstrap' });
    const script = await isolate.compileScript(`'use strict';\n${input.code}`, { filename: input.file, lineOffset: -2 });
    await script.run(context);
    const main = `(async () => {
      const { sdk, servers, sleep, console } = globalThis.__vigil_globals;
      delete globalThis.__vigil_globals;
      try {
        const result = await ${ENTRY}(sdk, servers, sleep, console);
        return JSON.stringify({ ok: result === undefined ? null : result });
      } catch (e) {
        const err = e !== null && typeof e === 'object' ? e : { message: String(e) };
        return JSON.stringify({ error: { name: err.name, code: err.code, message: err.message === undefined ? String(e) : String(err.message), details: err.details, stack: err.stack } });
      }
    })()`;
    const timeout = new Promise<SandboxOutcome>((res) => {
      timer = clock.setTimeout(() => {
        // Settled before the abort, whose listener below would settle the race as stopped.
        res({ kind: 'timeout' });
        input.abort.abort();
      }, input.timeoutMs);
    });
    const stopped = new Promise<SandboxOutcome>((res) => {
      const signal = input.abort.signal;
      const stop = (): void => res({ kind: 'stopped', signal: String(signal.reason) });
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
    });
    const run = context.eval(main, { promise: true, filename: 'vigil:main' }).then(
      (text): SandboxOutcome => {
        const r = JSON.parse(String(text)) as { ok?: unknown; error?: SandboxOutcome & { kind: 'threw' } extends { error: infer E } ? E : never };
        return r.error ? { kind: 'threw', error: r.error } : { kind: 'returned', json: JSON.stringify(r.ok) };
      },
      (error: unknown): SandboxOutcome => ({ kind: 'crashed', message: isolate.isDisposed ? 'the script exceeded its memory limit' : (error as Error).message }),
    );
    return await Promise.race([run, timeout, stopped]);
  } catch (error) {
    if (error instanceof VigilError) throw error;
    const message = (error as Error).message;
    if (/SyntaxError|is not defined|Unexpected/.test(message) || (error as Error).name === 'SyntaxError') {
      return { kind: 'threw', error: { name: 'SyntaxError', message } };
    }
    return { kind: 'crashed', message: isolate.isDisposed ? 'the script exceeded its memory limit' : message };
  } finally {
    if (timer !== undefined) clock.clearTimeout(timer);
    if (!isolate.isDisposed) isolate.dispose();
  }
}
