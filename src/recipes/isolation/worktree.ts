// transfer_mode "worktree": every step works in its own git worktree on a
// branch vigil/<run-id>/<label> made from the workspace's HEAD when the step
// starts. When it succeeds its changes are committed and merged back into
// the workspace (one merge at a time); a merge that conflicts is aborted and
// reported, and its branch kept for a person to resolve. Worktrees always go
// away; those left by a crashed run are removed by the next run, their work
// kept on their branches (stale-worktrees.ts).
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { RunRefusedError } from '../errors.ts';
import { commitsAhead, git, gitOk } from './git.ts';
import type { Isolation, KeptWork, MergeOutcome, StepWorkspace } from './isolation.ts';
import { commitIdentity, commitLeftovers, mainCheckout, recoverStaleWorktrees, worktreesDir } from './stale-worktrees.ts';

/** How a composite names its children's branches and commits, and where a resumed child starts. */
export interface WorktreeNaming {
  /** The branch of a copy: `vigil/<run>/<label>` by default. */
  branchOf(label: string): string;
  /** The commit message of a copy's work. */
  commitOf(label: string): string;
  /** The merge commit's message. */
  mergeOf(label: string): string;
  /** A branch to start the copy from instead of HEAD (a resumed child's earlier work), or null. */
  startOf?(label: string): Promise<string | null>;
}

/** How the copies of a run's own steps are named: `vigil/<run>/<label>`. */
export const stepNaming = (runId: string): WorktreeNaming => ({
  branchOf: (label) => `vigil/${runId}/${label}`,
  commitOf: (label) => `vigil ${runId}: step ${label}`,
  mergeOf: (label) => `vigil ${runId}: merge step ${label}`,
});

// Concurrent `git worktree add`s of one repository race on .git/worktrees
// ("failed to read .git/worktrees/<name>/commondir"): they run one at a time.
// Merges and worktree changes of one repository share the queue.
const repoQueues = new Map<string, Promise<unknown>>();
function oneAtATime<T>(repo: string, work: () => Promise<T>): Promise<T> {
  const next = (repoQueues.get(repo) ?? Promise.resolve()).then(work);
  const settled = next.catch(() => {});
  repoQueues.set(repo, settled);
  void settled.then(() => {
    if (repoQueues.get(repo) === settled) repoQueues.delete(repo);
  });
  return next;
}

export async function createWorktreeIsolation(workspace: string, runId: string, file: string, naming?: WorktreeNaming): Promise<Isolation> {
  const top = await git(workspace, ['rev-parse', '--show-toplevel']);
  if (top.code !== 0)
    throw new RunRefusedError(`${file}: transfer_mode "worktree" needs the workspace ${workspace} to be a git repository (git init, then commit)`);
  const repo = top.stdout.trim();
  if ((await git(repo, ['rev-parse', '--verify', 'HEAD'])).code !== 0)
    throw new RunRefusedError(`${file}: transfer_mode "worktree" needs at least one commit in ${repo}`);
  const commonDir = resolve(repo, (await gitOk(repo, ['rev-parse', '--git-common-dir'])).trim());
  // Keep runner files out of `git status` and out of merges.
  const exclude = join(commonDir, 'info', 'exclude');
  mkdirSync(join(commonDir, 'info'), { recursive: true });
  const current = existsSync(exclude) ? readFileSync(exclude, 'utf8') : '';
  for (const line of ['/.vigil/runs/', '/.vigil/worktrees/'])
    if (!current.split('\n').includes(line)) appendFileSync(exclude, `${current.endsWith('\n') || current === '' ? '' : '\n'}${line}\n`);
  const commitEnv = await commitIdentity(repo);
  // In the main checkout, also for the copies of a run that works in a worktree of its own.
  const base = worktreesDir(await mainCheckout(repo));
  const names: WorktreeNaming = naming ?? stepNaming(runId);
  const relWorkspace = relative(repo, resolve(workspace));

  const removeWorktree = async (path: string, branch: string, start: string, keep: { message: string } | null): Promise<KeptWork> => {
    // Kept: what the copy holds uncommitted goes onto its branch first (a conflict's is committed already;
    // a succeeded child of a cancelled run, or a kept candidate, had not been), or removing it would lose it.
    const kept = keep !== null && (await commitKept(path, branch, start, keep.message, commitEnv));
    await oneAtATime(repo, () => git(repo, ['worktree', 'remove', '--force', path]));
    rmSync(path, { recursive: true, force: true });
    if (!kept) await git(repo, ['branch', '-D', branch]);
    return kept ? { branch } : null;
  };

  return {
    mode: 'worktree',
    recover: (isLive: (runId: string) => boolean) => recoverStaleWorktrees(repo, isLive, runId),
    async prepare(label: string, relDir: string): Promise<StepWorkspace> {
      const path = join(base, runId, label);
      const branch = names.branchOf(label);
      mkdirSync(join(base, runId), { recursive: true });
      // Start from the workspace as it is now, so a step sees what the steps it depends on merged
      // (a resumed child: from the work its earlier run left).
      const start = (await names.startOf?.(label)) ?? 'HEAD';
      const startCommit = (await gitOk(repo, ['rev-parse', `${start}^{commit}`])).trim();
      await oneAtATime(repo, () => gitOk(repo, ['worktree', 'add', '-b', branch, path, startCommit]));
      const dir = join(path, relWorkspace, relDir);
      mkdirSync(dir, { recursive: true });
      return {
        dir,
        root: path,
        // One merge at a time, and never while a worktree is being added or removed.
        bringBack: () => oneAtATime(repo, () => mergeBack(repo, path, branch, names.commitOf(label), names.mergeOf(label), commitEnv)),
        dispose: (keep: boolean) => removeWorktree(path, branch, startCommit, keep ? { message: names.commitOf(label) } : null),
      };
    },
  };
}

/**
 * Commits what `path` holds onto `branch` as the crash recovery does (a stopped step's agent may have been
 * killed inside a git command, leaving its lock); true when the branch then holds work beyond `start`.
 */
async function commitKept(path: string, branch: string, start: string, message: string, env: Record<string, string> | undefined): Promise<boolean> {
  await commitLeftovers(path, message, env);
  return (await commitsAhead(path, start, branch)) > 0;
}

async function mergeBack(
  repo: string,
  path: string,
  branch: string,
  commitMessage: string,
  mergeMessage: string,
  env: Record<string, string> | undefined,
): Promise<MergeOutcome> {
  await gitOk(path, ['add', '-A'], env);
  if ((await gitOk(path, ['status', '--porcelain'])).trim() !== '') await gitOk(path, ['commit', '-q', '-m', commitMessage], env);
  const ahead = await commitsAhead(repo, 'HEAD', branch);
  if (ahead === 0) return { result: 'nothing-to-merge', branch };
  const merge = await git(repo, ['merge', '--no-ff', '--no-edit', '-m', mergeMessage, branch], env);
  if (merge.code === 0) return { result: 'merged', branch };
  const conflicted = (await git(repo, ['diff', '--name-only', '--diff-filter=U'])).stdout.trim().split('\n').filter(Boolean);
  await git(repo, ['merge', '--abort']);
  const why = merge.signal ? `git merge was stopped by ${merge.signal}` : `git merge failed: ${(merge.stderr || merge.stdout).trim() || `exit ${merge.code}`}`;
  const detail = conflicted.length ? `conflicts in ${conflicted.join(', ')}; the step's work is kept on branch ${branch}` : `${why}; the step's work is kept on branch ${branch}`;
  return { result: 'conflict', branch, detail };
}
