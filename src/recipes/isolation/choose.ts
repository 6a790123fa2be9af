// Which copy of the workspace a run's work gets — decided here once, for the
// run (steps-prepare.ts, composite-node.ts) and for its plan (check/plan-shape.ts,
// `vigil sequence --dry-run`), so that the plan cannot say something else.
import { spawnSync } from 'node:child_process';
import { isRunnable, type Recipe } from '../types.ts';

export type IsolationMode = 'worktree' | 'mirror' | 'rsync' | 'none';

/** A sequence's steps: the recipe's transfer_mode, none when it names none. */
export function stepsIsolation(recipe: Recipe): IsolationMode {
  return (isRunnable(recipe) ? recipe.transfer_mode : undefined) ?? 'none';
}

/**
 * A composite's children that work apart (parallel children, the adversarial contest, convergent
 * strategies: types whose definition says `isolatesChildren`): a git worktree each when the workspace
 * has a commit, else a mirror (or rsync) copy; transfer_mode "none" shares the workspace on purpose.
 */
export function childrenIsolation(recipe: Recipe, hasCommit: boolean): IsolationMode {
  const mode = isRunnable(recipe) ? recipe.transfer_mode : undefined;
  if (mode === 'none') return 'none';
  if (hasCommit) return 'worktree';
  return mode === 'rsync' ? 'rsync' : 'mirror';
}

/**
 * Whether `dir` is in a git repository whose HEAD holds it (what a worktree starts from). A folder the
 * repository does not track — one made inside a clone to try something — has nothing to start a
 * worktree from: its children get copies of it, as outside git.
 */
export function hasGitCommit(dir: string): boolean {
  const prefix = spawnSync('git', ['rev-parse', '--show-prefix'], { cwd: dir, encoding: 'utf8' });
  if (prefix.status !== 0) return false;
  const inTop = prefix.stdout.trim().replace(/\/$/, '');
  return spawnSync('git', ['rev-parse', '--verify', '-q', inTop ? `HEAD:${inTop}` : 'HEAD'], { cwd: dir, stdio: 'ignore' }).status === 0;
}
