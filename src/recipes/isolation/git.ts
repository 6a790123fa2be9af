// Small promise wrapper around the git command line; git runs in a process
// group of its own (own-group.ts), so that each command runs to its end.
import { type CommandResult, runInOwnGroup } from './own-group.ts';

export type GitResult = CommandResult;

export function git(cwd: string, args: string[], env?: Record<string, string>): Promise<GitResult> {
  return runInOwnGroup('git', args, { cwd, env: { ...process.env, ...env } });
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
