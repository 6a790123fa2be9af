// How a composite that copies its workspace (parallel, adversarial,
// convergent) uses git: its results branch `vigil/<run>` (run-branch.ts),
// its copies' branches `vigil/<run>-<label>`, commit messages that say which
// recipe, child and variables made them, and — resuming a run — the branches
// the earlier run left, so that no finished work is lost.
import { hasGitCommit } from '../isolation/choose.ts';
import { branchExists, insideVigilCopy, openRunBranch, type RunBranch, runBranchName } from '../isolation/run-branch.ts';
import type { WorktreeNaming } from '../isolation/worktree.ts';
import type { Recipe, RunnableRecipe } from '../types.ts';

const COPYING = new Set(['parallel', 'adversarial', 'convergent']);

/** ` with NAME=a WHO=b`, or nothing. */
export const varsText = (vars: Record<string, string>): string => {
  const pairs = Object.entries(vars).map(([k, v]) => `${k}=${v}`);
  return pairs.length > 0 ? ` with ${pairs.join(' ')}` : '';
};

/** The results branch of a copying composite run on a checked-out branch; null elsewhere (no git, a copy of a run above, transfer_mode none). */
export async function openResultsBranch(recipe: RunnableRecipe, workspace: string, runId: string, previousId: string | null): Promise<RunBranch | null> {
  if (!COPYING.has(recipe.type ?? '') || recipe.transfer_mode === 'none') return null;
  if (!hasGitCommit(workspace) || (await insideVigilCopy(workspace))) return null;
  // Resumed: on from what the earlier run brought together.
  const from = previousId && (await branchExists(workspace, runBranchName(previousId))) ? runBranchName(previousId) : null;
  return openRunBranch(workspace, runId, from);
}

export function copyNaming(recipe: Recipe, runId: string, previousId: string | null, repo: string, whatOf: (label: string) => string): WorktreeNaming {
  const head = `vigil ${runId}: ${recipe.type} recipe "${recipe.name}"`;
  return {
    branchOf: (label) => `vigil/${runId}-${label}`,
    commitOf: (label) => `${head}, ${whatOf(label)}`,
    mergeOf: (label) => `${head}: merge ${whatOf(label)}`,
    // A resumed copy starts from the work its earlier run left (committed on its branch by the recovery).
    async startOf(label) {
      const earlier = previousId ? `vigil/${previousId}-${label}` : null;
      return earlier && (await branchExists(repo, earlier)) ? earlier : null;
    },
  };
}
