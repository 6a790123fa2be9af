// Runs `vigil <args>` to its end the way a user does (bin/vigil.js, without
// npm in between), without blocking the event loop, and gives back what it
// printed. Each test folder's helpers choose its folder and environment.
import { spawnChild } from './children.ts';
import { vigilArgs } from './server-process.ts';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** Written to its standard input, which is then closed (empty by default). */
  readonly stdin?: string;
  /** Killed (SIGTERM) past this many milliseconds. */
  readonly timeoutMs?: number;
}

export function runCli(args: readonly string[], options: CliOptions): Promise<CliResult> {
  return new Promise((done, fail) => {
    const child = spawnChild(process.execPath, vigilArgs(args), { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'], timeout: options.timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.once('error', fail);
    child.once('close', (code) => done({ code, stdout, stderr }));
    // A command may stop reading its input (a value refused as too long) and exit: the rest of the write fails.
    child.stdin.on('error', () => {});
    child.stdin.end(options.stdin ?? '');
  });
}
