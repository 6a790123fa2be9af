// Bringing a copied step back (transfer_mode mirror and rsync): only the
// step's own changes — files it created, changed or deleted against the
// snapshot taken when its copy was made — go back, so files that concurrent
// steps or the user created or changed meanwhile are left alone. A file both
// sides changed differently is a conflict: the workspace keeps its version,
// the step's version stays in its copy, and the step reports the files.
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** size and modification time of each file under a root (without .git and .vigil at the top). */
export type Snapshot = Map<string, string>;

const SKIP = new Set(['.git', '.vigil']);

export function snapshot(root: string, dir = root, out: Snapshot = new Map()): Snapshot {
  let entries: import('node:fs').Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries) {
    if (dir === root && SKIP.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) snapshot(root, path, out);
    else {
      try {
        const st = lstatSync(path);
        out.set(relative(root, path), `${st.size}:${st.mtimeMs}:${st.mode}`);
      } catch {
        // gone meanwhile
      }
    }
  }
  return out;
}

export interface CopyBackPlan {
  /** Files to copy from the step's copy into the workspace. */
  copy: string[];
  /** Files to delete from the workspace. */
  remove: string[];
  /** Files the step changed that the workspace also changed, differently. */
  conflicts: string[];
}

const sameContent = (a: string, b: string): boolean => {
  try {
    return readFileSync(a).equals(readFileSync(b));
  } catch {
    return false;
  }
};

/**
 * `copyStart`/`workspaceStart`: snapshots of the copy and of the workspace
 * when the copy was made. The step's changes are its copy against
 * copyStart; the workspace's own changes are the workspace against
 * workspaceStart.
 */
export function planCopyBack(copy: string, workspace: string, copyStart: Snapshot, workspaceStart: Snapshot): CopyBackPlan {
  const copyNow = snapshot(copy);
  const workspaceNow = snapshot(workspace);
  const plan: CopyBackPlan = { copy: [], remove: [], conflicts: [] };
  const workspaceUntouched = (rel: string) => workspaceNow.get(rel) === workspaceStart.get(rel);
  for (const [rel, stat] of copyNow) {
    if (copyStart.get(rel) === stat) continue; // the step did not touch it
    if (workspaceUntouched(rel)) plan.copy.push(rel);
    else if (!sameContent(join(copy, rel), join(workspace, rel))) plan.conflicts.push(rel);
  }
  for (const rel of copyStart.keys()) {
    if (copyNow.has(rel)) continue; // the step did not delete it
    if (!workspaceNow.has(rel)) continue;
    if (workspaceUntouched(rel)) plan.remove.push(rel);
    else plan.conflicts.push(rel);
  }
  return plan;
}

export function describeConflicts(conflicts: readonly string[], copy: string): string {
  const shown = conflicts.slice(0, 10).join(', ') + (conflicts.length > 10 ? ` and ${conflicts.length - 10} more` : '');
  return `changed in the workspace while the step ran, and differently by the step: ${shown}; the workspace kept its versions, the step's are in ${copy} (until the next run)`;
}
