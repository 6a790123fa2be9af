// Small promise wrapper around the git command line.
import { execFile } from 'node:child_process';

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function git(cwd: string, args: string[], env?: Record<string, string>): Promise<GitResult> {
  return new Promise((resolvePromise) => {
    execFile('git', args, { cwd, env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? ((error as { code: number }).code) : 1) : 0;
      resolvePromise({ code, stdout: stdout.toString(), stderr: stderr.toString() });
    });
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
