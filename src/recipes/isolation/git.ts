// Small promise wrapper around the git command line.
import { spawn } from 'node:child_process';

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
  /** The signal that ended git, when one did. */
  signal?: NodeJS.Signals;
}

/** Output kept of one command: a diff or a log of a large repository fits, a runaway one does not fill memory. */
const maxOutput = 64 * 1024 * 1024;

/**
 * Runs git in a process group of its own: Ctrl-C in a terminal signals the whole foreground group, and a
 * merge or commit cut in half by it left a conflicted-looking state and a misleading "merge failed".
 * The runner hears the signal and stops at its own boundaries; each git command runs to its end.
 */
export function git(cwd: string, args: string[], env?: Record<string, string>): Promise<GitResult> {
  return new Promise((resolvePromise) => {
    const child = spawn('git', args, { cwd, env: { ...process.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = { stdout: '', stderr: '' };
    const collect = (into: 'stdout' | 'stderr') => (chunk: Buffer) => {
      if (out[into].length < maxOutput) out[into] += chunk.toString();
    };
    child.stdout.on('data', collect('stdout'));
    child.stderr.on('data', collect('stderr'));
    child.once('error', (error) => resolvePromise({ code: 1, stdout: out.stdout, stderr: `${out.stderr}${error.message}` }));
    child.once('close', (code, signal) => resolvePromise({ code: code ?? 1, ...out, ...(signal ? { signal } : {}) }));
  });
}

export async function gitOk(cwd: string, args: string[], env?: Record<string, string>): Promise<string> {
  const r = await git(cwd, args, env);
  if (r.code !== 0) throw new Error(`git ${args.join(' ')} failed in ${cwd}: ${r.stderr.trim() || r.stdout.trim()}`);
  return r.stdout;
}

/** How many commits `branch` holds beyond `from`. */
export async function commitsAhead(cwd: string, from: string, branch: string): Promise<number> {
  return Number((await gitOk(cwd, ['rev-list', '--count', `${from}..${branch}`])).trim());
}
