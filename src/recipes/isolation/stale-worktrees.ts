// Worktrees a crashed run left under .vigil/worktrees/<run>/<label>. Their
// work is never thrown away by a later run: what a worktree holds
// uncommitted is committed on its branch (a merge the crash cut short is
// undone first), the worktree is removed, and its branch is deleted only when
// another branch holds its commits; otherwise the branch stays, named, for
// `--resume` or a person. `vigil runs prune` removes what is left.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { git, gitOk } from './git.ts';

const IDENTITY = { GIT_AUTHOR_NAME: 'vigil', GIT_AUTHOR_EMAIL: 'vigil@localhost', GIT_COMMITTER_NAME: 'vigil', GIT_COMMITTER_EMAIL: 'vigil@localhost' };

/** How run ids look (records/run-record.ts newRunId): 20261206-074500-ab12. */
const RUN_ID = /^\d{8}-\d{6}-[0-9a-f]{4}$/;

/** The author for commits Vigil makes: the repository's own identity, else `vigil <vigil@localhost>`. */
export async function commitIdentity(repo: string): Promise<Record<string, string> | undefined> {
  return (await git(repo, ['config', 'user.email'])).code === 0 ? undefined : IDENTITY;
}

/** The main checkout of the repository `dir` is in (a worktree's too): where .vigil/worktrees lives. */
export async function mainCheckout(dir: string): Promise<string> {
  const top = (await gitOk(dir, ['rev-parse', '--show-toplevel'])).trim();
  const common = resolve(top, (await gitOk(dir, ['rev-parse', '--git-common-dir'])).trim());
  return basename(common) === '.git' ? dirname(common) : top;
}

export const worktreesDir = (main: string): string => join(main, '.vigil', 'worktrees');

interface Worktree {
  path: string;
  branch: string | null;
}

async function worktreesOf(main: string): Promise<Worktree[]> {
  const out = await gitOk(main, ['worktree', 'list', '--porcelain']);
  return out
    .split('\n\n')
    .map((block) => {
      const path = /^worktree (.+)$/m.exec(block)?.[1];
      const branch = /^branch refs\/heads\/(.+)$/m.exec(block)?.[1] ?? null;
      return path ? { path, branch } : null;
    })
    .filter((w): w is Worktree => w !== null);
}

/** Commits what the worktree holds uncommitted, undoing a merge cut short; true when it committed. */
export async function commitLeftovers(path: string, message: string, env: Record<string, string> | undefined): Promise<boolean> {
  // A git command killed with its runner leaves its lock; nothing else holds it now.
  rmSync(join((await gitOk(path, ['rev-parse', '--absolute-git-dir'])).trim(), 'index.lock'), { force: true });
  if ((await git(path, ['rev-parse', '-q', '--verify', 'MERGE_HEAD'])).code === 0) await git(path, ['merge', '--abort']);
  await gitOk(path, ['add', '-A'], env);
  if ((await gitOk(path, ['status', '--porcelain'])).trim() === '') return false;
  await gitOk(path, ['commit', '-q', '--no-verify', '-m', message], env);
  return true;
}

/** A copy's branch: `vigil/<run>/<label>` of a step, `vigil/<run>-<label>` of a composite's child. */
const WORK_BRANCH = /^vigil\/\d{8}-\d{6}-[0-9a-f]{4}[-/]/;

/**
 * True when a branch other than a copy's holds every commit of `branch`: it
 * was merged, or lands in a run's results. (Another copy's branch does not
 * count: a resumed child's copy starts from its earlier one, and goes too.)
 */
export async function recordedElsewhere(main: string, branch: string): Promise<boolean> {
  const holders = (await gitOk(main, ['for-each-ref', '--format=%(refname:short)', '--contains', `refs/heads/${branch}`, 'refs/heads'])).split('\n').filter(Boolean);
  return holders.some((b) => b !== branch && !WORK_BRANCH.test(b));
}

/** What a copy held, from its run's record: `parallel recipe "fan", child 1: recipe "one" with NAME=b`, else its label. */
function whoseCopy(main: string, run: string, label: string): string {
  try {
    const record = JSON.parse(readFileSync(join(main, '.vigil', 'runs', run, 'run.json'), 'utf8')) as {
      recipe: string;
      type: string;
      children?: Array<{ role: string; name: string; vars?: Record<string, string> }>;
    };
    const child = record.children?.find((c) => c.role === `child ${label}` || c.role === label.replace('-', ' '));
    const vars = Object.entries(child?.vars ?? {}).map(([k, v]) => `${k}=${v}`);
    const what = child ? `${child.role}: recipe "${child.name}"${vars.length ? ` with ${vars.join(' ')}` : ''}` : label === 'results' ? 'its results' : record.children ? label : `step ${label}`;
    return `${record.type} recipe "${record.recipe}", ${what}`;
  } catch {
    return label; // no record (a run of another checkout)
  }
}

/** The runs that left folders under .vigil/worktrees and are not running now (nor `except`). */
function staleRuns(main: string, isLive: (runId: string) => boolean, except: string | null): string[] {
  const base = worktreesDir(main);
  if (!existsSync(base)) return [];
  return readdirSync(base).filter((run) => run !== except && !isLive(run));
}

/**
 * A later run's clean-up: each worktree of a run that is not running has its
 * work committed on its branch and is removed; a branch no other holds is
 * kept. Returns one line per worktree saying what became of it.
 */
export async function recoverStaleWorktrees(dir: string, isLive: (runId: string) => boolean, except: string | null = null): Promise<string[]> {
  const main = await mainCheckout(dir);
  const runs = staleRuns(main, isLive, except);
  if (runs.length === 0) return [];
  const env = await commitIdentity(main);
  const lines: string[] = [];
  const listed = await worktreesOf(main);
  for (const run of runs) {
    const folder = join(worktreesDir(main), run);
    // Deepest first: a run's worktree may hold the worktrees of runs nested in it.
    for (const wt of listed.filter((w) => w.path.startsWith(`${folder}/`)).sort((a, b) => b.path.length - a.path.length)) {
      const label = wt.path.slice(folder.length + 1);
      let saved = false;
      if (existsSync(wt.path) && wt.branch) saved = await commitLeftovers(wt.path, `vigil ${run}: ${whoseCopy(main, run, label)}: work left when the run was interrupted`, env).catch(() => false);
      await git(main, ['worktree', 'remove', '--force', '--force', wt.path]);
      rmSync(wt.path, { recursive: true, force: true });
      if (!wt.branch) lines.push(`removed worktree ${wt.path}, left by interrupted run ${run}`);
      else if (await recordedElsewhere(main, wt.branch)) {
        await git(main, ['branch', '-D', wt.branch]);
        lines.push(`removed worktree ${wt.path}, left by interrupted run ${run} (its work is on another branch)`);
      } else
        lines.push(
          `removed worktree ${wt.path}, left by interrupted run ${run}; its work${saved ? ' (committed now)' : ''} stays on branch ${wt.branch} (vigil sequence <recipe> --resume ${run} brings it in; vigil runs prune removes it)`,
        );
    }
    rmSync(folder, { recursive: true, force: true });
  }
  await git(main, ['worktree', 'prune']);
  return lines;
}

/**
 * `vigil runs prune`: removes every worktree and work branch of runs that are
 * not running, and their result branches `vigil/<run>` that another branch
 * holds; an unmerged result branch is named with how to merge it. With
 * `dryRun`, only says what it would do.
 */
export async function pruneRuns(dir: string, isLive: (runId: string) => boolean, dryRun: boolean): Promise<string[]> {
  const main = await mainCheckout(dir);
  const verb = dryRun ? 'would remove' : 'removed';
  const lines: string[] = [];
  const runs = staleRuns(main, isLive, null);
  for (const wt of (await worktreesOf(main)).filter((w) => runs.some((run) => w.path.startsWith(`${join(worktreesDir(main), run)}/`))).sort((a, b) => b.path.length - a.path.length)) {
    const dirty = existsSync(wt.path) && (await git(wt.path, ['status', '--porcelain'])).stdout.trim() !== '';
    if (!dryRun) {
      await git(main, ['worktree', 'remove', '--force', '--force', wt.path]);
      rmSync(wt.path, { recursive: true, force: true });
    }
    lines.push(`${verb} worktree ${wt.path}${dirty ? ' (with uncommitted changes)' : ''}`);
  }
  for (const run of runs) {
    if (!dryRun) rmSync(join(worktreesDir(main), run), { recursive: true, force: true });
  }
  const branches = (await gitOk(main, ['for-each-ref', '--format=%(refname:short)', 'refs/heads/vigil'])).split('\n').filter(Boolean);
  for (const branch of branches) {
    const rest = branch.slice('vigil/'.length);
    const run = /^(\d{8}-\d{6}-[0-9a-f]{4})/.exec(rest)?.[1];
    if (!run || isLive(run)) continue;
    const result = RUN_ID.test(rest);
    const merged = await recordedElsewhere(main, branch);
    if (result && !merged) {
      lines.push(`kept branch ${branch}: the results of run ${run}, not merged (git merge --no-ff ${branch}, or git branch -D ${branch})`);
      continue;
    }
    // A work branch goes, merged or not (that is what prune is for); one whose work no other branch holds says so.
    if (!dryRun && (await git(main, ['branch', '-D', branch])).code !== 0) lines.push(`could not remove branch ${branch} (is it checked out?)`);
    else lines.push(`${verb} branch ${branch}${merged ? '' : ' (its work is merged nowhere else)'}`);
  }
  if (!dryRun) await git(main, ['worktree', 'prune']);
  return lines;
}

/** After a run that resumed `runId`: its branches (`vigil/<run>`, `vigil/<run>-<label>`) whose work another branch now holds go. */
export async function dropBranchesOf(dir: string, runId: string): Promise<void> {
  const main = await mainCheckout(dir);
  const branches = (await gitOk(main, ['for-each-ref', '--format=%(refname:short)', `refs/heads/vigil/${runId}`, `refs/heads/vigil/${runId}-*`])).split('\n').filter(Boolean);
  for (const branch of branches) if (await recordedElsewhere(main, branch)) await git(main, ['branch', '-D', branch]);
}
