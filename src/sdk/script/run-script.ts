// `vigil script run`: find the script, strip its types, run it in the
// sandbox with the SDK of this workspace, print its return value as JSON on
// the last line. Exit 0 when it returns, 1 when it throws (or dies), 124 when
// it outlives its timeout, 130 or 143 when a signal stops it — after cancelling what it started.
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { closeAllCir } from '../../cir/open.ts';
import { settleEvents } from '../../events/channel.ts';
import { sdkContext } from '../../workspace/context.ts';
import { abortOnStopSignals, ExitCode, type ExitCodeValue, signalExit } from '../../errors/exit-codes.ts';
import { invalid, VigilError } from '../../errors/vigil-error.ts';
import { McpServers, readMcpConfig } from '../../mcp-servers/mcp-servers.ts';
import { buildSdk } from '../namespaces/index.ts';
import { compileScript } from './compile.ts';
import { findScript } from './discover.ts';
import { runInSandbox } from './sandbox.ts';

export interface ScriptRequest {
  name: string;
  vars: Record<string, string>;
  workspace: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutSeconds: number;
  memoryMb: number;
}

export interface ScriptIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}


export async function runScript(req: ScriptRequest, io: ScriptIo): Promise<ExitCodeValue> {
  const workspace = resolve(req.cwd, req.workspace);
  let isDir = false;
  try {
    isDir = statSync(workspace).isDirectory();
  } catch {
    // reported below
  }
  if (!isDir) throw invalid('--workspace', `${workspace} is not a directory`);
  const file = findScript(req.name, workspace, req.cwd, req.env);
  const code = compileScript(readFileSync(file, 'utf8'), file);
  const ctx = sdkContext({ workspace, env: req.env, vars: req.vars, caller: 'script' });
  const abort = new AbortController();
  const sdk = buildSdk(ctx, { signal: abort.signal });
  const servers = new McpServers(readMcpConfig(workspace), workspace, req.env);
  const manifest = Object.fromEntries(Object.entries(sdk).map(([ns, methods]) => [ns, Object.keys(methods)]));
  // Stopped from outside (Ctrl-C, a supervisor's SIGTERM), it stops what it started as its timeout does:
  // Node's own exit on the signal left a sequence.run's runner and its agents going.
  const stopListening = abortOnStopSignals(abort);
  // Host calls still running when the script stops: a sequence.run's runner is given time to cancel its
  // run and record it (it is SIGKILLed 10 s after its SIGTERM) before this process ends.
  const pending = new Set<Promise<unknown>>();
  try {
    const outcome = await runInSandbox({
      code,
      file,
      manifest,
      vars: req.vars,
      workspace,
      call: (ns, method, args) => {
        const fn = sdk[ns]?.[method];
        if (!fn) throw new VigilError('INVALID_ARGUMENT', `sdk.${ns}.${method} does not exist`, { field: `${ns}.${method}` });
        const result = (fn as (...a: unknown[]) => unknown)(...args);
        if (result instanceof Promise) {
          pending.add(result);
          void result.catch(() => {}).finally(() => pending.delete(result));
        }
        return result;
      },
      serverCall: (id, tool, args) => servers.call(id, tool, args),
      log: (level, line) => (level === 'log' ? io.stdout : io.stderr).write(`${line}\n`),
      timeoutMs: req.timeoutSeconds * 1000,
      memoryMb: req.memoryMb,
      abort,
    });
    switch (outcome.kind) {
      case 'returned':
        io.stdout.write(`${outcome.json}\n`);
        return ExitCode.ok;
      case 'threw': {
        const e = outcome.error;
        const head = e.code ? `${e.code}: ${e.message}` : `${e.name ?? 'Error'}: ${e.message}`;
        const where = e.stack
          ?.split('\n')
          .slice(1)
          .find((l) => l.includes(file));
        io.stderr.write(`vigil: script ${req.name} failed: ${head}${where ? `\n  ${where.trim()}` : ''}\n`);
        return ExitCode.failed;
      }
      case 'timeout':
        await Promise.allSettled(pending);
        io.stderr.write(`vigil: script ${req.name} exceeded its timeout of ${req.timeoutSeconds} s and was stopped\n`);
        return ExitCode.timedOut;
      case 'stopped':
        await Promise.allSettled(pending);
        io.stderr.write(`vigil: script ${req.name} stopped by ${outcome.signal}; what it started was cancelled\n`);
        return signalExit(outcome.signal);
      default:
        io.stderr.write(`vigil: script ${req.name} stopped: ${outcome.message}\n`);
        return ExitCode.failed;
    }
  } finally {
    stopListening();
    abort.abort();
    await servers.closeAll();
    await settleEvents();
    closeAllCir();
  }
}
