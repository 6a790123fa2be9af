// `vigil runs prune`: what runs that are not running left in the project's
// git repository — worktrees and work branches — removed, one line each.
import { git } from '../isolation/git.ts';
import { pruneRuns } from '../isolation/stale-worktrees.ts';
import { runIsLive } from './runs-list.ts';

export async function pruneProjectRuns(projectRoot: string, dryRun: boolean): Promise<string[]> {
  if ((await git(projectRoot, ['rev-parse', '--verify', 'HEAD'])).code !== 0) return [`nothing to prune: ${projectRoot} is not a git repository with a commit`];
  const lines = await pruneRuns(projectRoot, (id) => runIsLive(projectRoot, id), dryRun);
  return lines.length > 0 ? lines : ['nothing to prune: no worktree or branch of a finished or interrupted run is left'];
}
