// The branch a composite run's results land on: `vigil/<run>`, made from
// HEAD (a resumed run: from the branch of the run it resumes) and checked
// out in a worktree of its own, into which the children's copies are merged.
// The checked-out branch is never committed to during the run; at the end
// the results are merged into it as one merge commit only when the working
// tree was clean at the start and the merge was asked for, otherwise the run
// prints the branch and the command that merges it. A run inside a pipeline
// or compound hands its results to their shared working tree instead.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { commitsAhead, git, gitOk } from './git.ts';
import { commitIdentity, mainCheckout, worktreesDir } from './stale-worktrees.ts';

export interface RunBranch {
  /** `vigil/<run>`. */
  readonly branch: string;
  /** The run's workspace inside the branch's worktree: where its children's copies start from and merge into. */
  readonly workspace: string;
  /** Tracked files with uncommitted changes when the run started (`git status --porcelain` lines): with any, the results are never merged. */
  readonly dirtyAtStart: readonly string[];
  /** Ends the run's use of the branch: merges it (when asked and allowed) and says what became of it, one line each. */
  finish(outcome: { succeeded: boolean; merge: boolean; title: string; handOver?: boolean }): Promise<{ lines: string[]; conflict: string | null }>;
}

const tracked = async (dir: string): Promise<string> => (await gitOk(dir, ['status', '--porcelain', '--untracked-files=no'])).trimEnd();

export const runBranchName = (runId: string): string => `vigil/${runId}`;

export async function branchExists(dir: string, branch: string): Promise<boolean> {
  return (await git(dir, ['rev-parse', '-q', '--verify', `refs/heads/${branch}`])).code === 0;
}

/** True when `dir` is inside a copy Vigil made (a worktree under .vigil/worktrees). */
export async function insideVigilCopy(dir: string): Promise<boolean> {
  const main = await mainCheckout(dir);
  return !relative(worktreesDir(main), resolve(dir)).startsWith('..');
}

export async function openRunBranch(workspace: string, runId: string, startFrom: string | null): Promise<RunBranch> {
  const top = (await gitOk(workspace, ['rev-parse', '--show-toplevel'])).trim();
  const dirtyAtStart = (await tracked(top)).split('\n').filter(Boolean);
  const clean = dirtyAtStart.length === 0;
  const checkedOut = (await git(top, ['symbolic-ref', '--short', '-q', 'HEAD'])).stdout.trim() || 'HEAD';
  const branch = runBranchName(runId);
  const path = join(worktreesDir(await mainCheckout(top)), runId, 'results');
  const base = (await gitOk(top, ['rev-parse', 'HEAD'])).trim();
  await gitOk(top, ['worktree', 'add', '-q', '-b', branch, path, startFrom ?? 'HEAD']);
  const env = await commitIdentity(top);
  return {
    branch,
    workspace: join(path, relative(top, resolve(workspace))),
    dirtyAtStart,
    async finish({ succeeded, merge, title, handOver }) {
      await git(top, ['worktree', 'remove', '--force', path]);
      await git(top, ['worktree', 'prune']);
      const ahead = await commitsAhead(top, base, branch);
      if (ahead === 0) {
        await git(top, ['branch', '-D', branch]);
        // A run that ended early may have kept its children's work on their own branches (said above this line).
        return { lines: [succeeded ? 'the run changed nothing: no branch kept' : `nothing was merged into the results before the run ended: branch ${branch} removed`], conflict: null };
      }
      const how = `merge it with: git merge --no-ff ${branch}`;
      if (!succeeded) return { lines: [`what the run brought together before it ended is on branch ${branch} (${how})`], conflict: null };
      if (handOver) return handOverToWorkingTree(top, base, branch);
      if (!merge) return { lines: [`the results are on branch ${branch}; ${how} (or run with --merge, or "merge": true in the recipe)`], conflict: null };
      if (!clean) return { lines: [`the results are on branch ${branch}, not merged: the working tree had uncommitted changes when the run started; ${how}`], conflict: null };
      if ((await tracked(top)) !== '') return { lines: [`the results are on branch ${branch}, not merged: the working tree changed during the run; ${how}`], conflict: null };
      const merged = await git(top, ['merge', '--no-ff', '--no-edit', '-m', title, branch], env);
      if (merged.code === 0) {
        await git(top, ['branch', '-D', branch]);
        return { lines: [`merged the results (branch ${branch}) into ${checkedOut} as one merge commit`], conflict: null };
      }
      const files = (await git(top, ['diff', '--name-only', '--diff-filter=U'])).stdout.trim().split('\n').filter(Boolean);
      await git(top, ['merge', '--abort']);
      const conflict = `merging branch ${branch} into ${checkedOut} conflicts${files.length ? ` in ${files.join(', ')}` : `: ${(merged.stderr || merged.stdout).trim()}`}; the results stay on ${branch} (${how})`;
      return { lines: [conflict], conflict };
    },
  };
}

/**
 * A run inside a pipeline or compound, whose entries share the workspace:
 * its results join the working tree as uncommitted changes, as the other
 * entries' do, so that the entries after it see them; nothing is committed
 * on the checked-out branch. Results that do not apply stay on the branch.
 */
async function handOverToWorkingTree(top: string, base: string, branch: string): Promise<{ lines: string[]; conflict: string | null }> {
  const patch = join(mkdtempSync(join(tmpdir(), 'vigil-results-')), 'results.patch');
  try {
    // Written by git itself: through a string, a byte that is not UTF-8 (a Latin-1 file) would reach the patch changed.
    await gitOk(top, ['diff', '--binary', `--output=${patch}`, base, branch]);
    const applied = await git(top, ['apply', '--whitespace=nowarn', patch]);
    if (applied.code === 0) {
      await git(top, ['branch', '-D', branch]);
      return { lines: [`brought the results (branch ${branch}) into the working tree, uncommitted, for the entries after this one`], conflict: null };
    }
    const conflict = `the results on branch ${branch} do not apply to the working tree: ${applied.stderr.trim().split('\n')[0]}; they stay on ${branch} (git merge --no-ff ${branch})`;
    return { lines: [conflict], conflict };
  } finally {
    rmSync(dirname(patch), { recursive: true, force: true });
  }
}
