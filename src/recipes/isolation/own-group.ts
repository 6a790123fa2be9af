// The commands that change a workspace (git, rsync) run in a process group of
// their own: Ctrl-C in a terminal signals the whole foreground group, and a
// merge or a copy-back cut in half by it leaves the workspace half changed
// (and git's "merge failed" with nothing to say). The runner hears the signal
// and stops at its own boundaries; each such command runs to its end.
import { spawn } from 'node:child_process';
import { OutputBytes } from '../../text/output-bytes.ts';

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
  /** The signal that ended the command, when one did. */
  signal?: NodeJS.Signals;
}

/** Bytes kept of one command's output: a diff or a log of a large repository fits, a runaway one does not fill memory. */
const maxOutput = 64 * 1024 * 1024;

export function runInOwnGroup(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {}): Promise<CommandResult> {
  return new Promise((resolvePromise) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, detached: true, stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    const stdout = new OutputBytes(maxOutput);
    const stderr = new OutputBytes(maxOutput);
    child.stdout?.on('data', (chunk: Buffer) => stdout.add(chunk));
    child.stderr?.on('data', (chunk: Buffer) => stderr.add(chunk));
    child.stdin?.on('error', () => {}); // a command that exits before reading its input
    child.stdin?.end(options.input);
    child.once('error', (error) => resolvePromise({ code: 1, stdout: stdout.text(), stderr: `${stderr.text()}${error.message}` }));
    child.once('close', (code, signal) => resolvePromise({ code: code ?? 1, stdout: stdout.text(), stderr: stderr.text(), ...(signal ? { signal } : {}) }));
  });
}
