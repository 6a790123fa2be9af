// Writes the starter files into a project (`vigil init`), never through a
// symbolic link and never outside the project folder. Every folder and file
// on the way is looked at without following links before anything is
// written: a link anywhere under the folder (a dangling one too) refuses the
// whole init, naming it. Each file is written beside its place and renamed
// over it, so that a link (or a hard link) put there meanwhile is replaced,
// never written through.
import { randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, readlinkSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StarterFile } from './starter-files.ts';

export interface StarterPlan {
  /** Files already there (init overwrites them only with --force). */
  existing: string[];
  /** Why init must not write at all: links and things in the way, one line each. */
  refused: string[];
}

/** What writing the files would meet under `root`, looked at without following any link. */
export function planStarter(root: string, files: readonly StarterFile[]): StarterPlan {
  const plan: StarterPlan = { existing: [], refused: [] };
  const seen = new Set<string>();
  for (const file of files) {
    const parts = file.path.split('/');
    for (let i = 1; i <= parts.length; i += 1) {
      const rel = parts.slice(0, i).join('/');
      const last = i === parts.length;
      const stat = lstatOrNull(join(root, rel));
      if (!stat) break;
      if (stat.isSymbolicLink()) {
        if (!seen.has(rel)) plan.refused.push(`${rel} is a symbolic link (to ${readlinkSync(join(root, rel))}); init never writes through a link: remove it, or init another folder`);
        seen.add(rel);
        break;
      }
      if (!last && !stat.isDirectory()) {
        if (!seen.has(rel)) plan.refused.push(`${rel} is not a folder, and ${file.path} goes inside it`);
        seen.add(rel);
        break;
      }
      if (last && !stat.isFile()) plan.refused.push(`${rel} is not a regular file`);
      else if (last) plan.existing.push(rel);
    }
  }
  return plan;
}

/** Writes one file: folders made one at a time (none of them a link), the text renamed into place. */
export function writeStarterFile(root: string, file: StarterFile): void {
  const parts = file.path.split('/');
  for (let i = 1; i < parts.length; i += 1) {
    const dir = join(root, ...parts.slice(0, i));
    const stat = lstatOrNull(dir);
    if (!stat) mkdirSync(dir);
    else if (stat.isSymbolicLink() || !stat.isDirectory()) throw new Error(`${parts.slice(0, i).join('/')} became a link or a file while init ran; nothing more was written`);
  }
  const path = join(root, file.path);
  const temporary = `${path}.init-${randomBytes(4).toString('hex')}`;
  // 'wx': a file (or a link) already at the temporary name is never followed or reused.
  writeFileSync(temporary, file.text, { flag: 'wx', mode: file.executable ? 0o755 : 0o644 });
  try {
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

function lstatOrNull(path: string) {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}
