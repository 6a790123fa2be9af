// Every path an SDK call reads or writes stays inside the folder it belongs
// to: the workspace for paths a caller names, the project root for Vigil's
// own files under .vigil/. The check is on the real path (symlinks followed)
// of the path or of its nearest existing parent (a dangling link followed), so neither `../..` nor a
// symlink planted in the workspace reaches past it; a refusal names the field
// and never what the file holds.
import { readlinkSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { VigilError } from '../errors/vigil-error.ts';

const inside = (root: string, path: string) => {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
};

/**
 * The real path of `path`, or of its nearest existing parent joined with the
 * rest; a dangling link is followed to where it points (writing through it
 * would create its target).
 */
function realOf(path: string): string {
  let existing = path;
  const rest: string[] = [];
  for (let hops = 0; hops < 40; ) {
    try {
      return resolve(realpathSync(existing), ...[...rest].reverse());
    } catch {
      let target: string | undefined;
      try {
        target = readlinkSync(existing);
      } catch {
        // not a link: look at its parent
      }
      if (target !== undefined) {
        existing = resolve(dirname(existing), target);
        hops++;
        continue;
      }
      const parent = dirname(existing);
      if (parent === existing) return path;
      rest.push(relative(parent, existing));
      existing = parent;
    }
  }
  return path;
}

/**
 * `path` (relative to `root`) as an absolute path, when it and its real path
 * lie inside `root`; otherwise a refusal naming `field`.
 */
export function confined(root: string, path: string, field: string, what = 'the workspace'): string {
  if (typeof path !== 'string' || path.length === 0) {
    throw new VigilError('INVALID_ARGUMENT', `${field}: must be a path inside ${what} (${root})`, { field });
  }
  const absolute = resolve(root, path);
  const realRoot = realOf(root);
  if (!inside(root, absolute) || !inside(realRoot, realOf(absolute))) {
    throw new VigilError('SANDBOX_VIOLATION', `${field}: ${path} is outside ${what} (${root}); SDK calls read and write only inside it, symlinks included`, {
      field,
    });
  }
  return absolute;
}

/** A JSON parse failure told without the text that failed (which may be any file's content). */
export function parseFailure(error: unknown): string {
  const message = (error as Error).message ?? '';
  const position = /position (\d+)/.exec(message)?.[1];
  return position === undefined ? 'not valid JSON' : `not valid JSON (at character ${position})`;
}
