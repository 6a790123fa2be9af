// mentu's `verify.git_clean_outside`: the step may change its own paths and
// nothing else of the git tree. The tree is read before and after the step
// (every file git does not ignore, through an index of its own, so the
// user's index is never touched) and the files that changed are compared.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { git } from './git.ts';

export interface TreeSnapshot {
  top: string;
  tree: string;
}

/** The working tree of the repository `dir` is in, as a git tree; null when `dir` is in none. */
export async function snapshotTree(dir: string): Promise<TreeSnapshot | null> {
  const top = await git(dir, ['rev-parse', '--show-toplevel']);
  if (top.code !== 0) return null;
  const root = top.stdout.trim();
  const index = join(tmpdir(), `vigil-clean-outside-${randomBytes(6).toString('hex')}`);
  try {
    const env = { GIT_INDEX_FILE: index };
    const added = await git(root, ['add', '-A', '.'], env);
    if (added.code !== 0) throw new Error(`git add -A failed in ${root}: ${added.stderr.trim()}`);
    const tree = await git(root, ['write-tree'], env);
    if (tree.code !== 0) throw new Error(`git write-tree failed in ${root}: ${tree.stderr.trim()}`);
    return { top: root, tree: tree.stdout.trim() };
  } finally {
    rmSync(index, { force: true });
  }
}

/** Files (relative to `dir`) that changed between the snapshots and lie outside every one of `paths` (relative to `dir`). */
export async function changedOutside(dir: string, before: TreeSnapshot, after: TreeSnapshot, paths: string[]): Promise<string[]> {
  const diff = await git(before.top, ['diff', '--name-only', '--no-renames', before.tree, after.tree]);
  const inside = (rel: string) => paths.some((p) => {
    const base = p.replace(/\/+$/, '').replace(/^\.\//, '');
    return base === '.' || base === '' || rel === base || rel.startsWith(`${base}/`);
  });
  return diff.stdout
    .split('\n')
    // Vigil's own records (.vigil/runs, …) change while every step runs.
    .filter((f) => f !== '' && !f.startsWith('.vigil/') && !f.includes('/.vigil/'))
    .map((f) => relative(dir, join(before.top, f)))
    .filter((rel) => !inside(rel));
}
