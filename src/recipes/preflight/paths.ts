// Paths as text, the way the guard places them: relative to the workspace
// (`.`), absolute, or under the symbolic home folder.
import { HOME } from './shell-words.ts';

/** Joins a path to the folder: `..` and `.` resolved as text; `$HOME/..` stays a marked ancestor of home. */
export function joinPath(cwd: string, target: string): string {
  const absolute = target.startsWith('/') || target.startsWith(HOME);
  const full = absolute ? target : `${cwd}/${target}`;
  const parts: string[] = [];
  const [head, ...rest] = full.split('/');
  for (const p of rest) {
    if (p === '' || p === '.') continue;
    if (p === '..' && parts.length > 0 && parts[parts.length - 1] !== '..') parts.pop();
    else if (p === '..' && head === '') continue; // /.. is /
    else parts.push(p);
  }
  if (head === '') return `/${parts.join('/')}`;
  const joined = [head, ...parts].join('/');
  return head === '.' && parts.length > 0 ? parts.join('/') : joined;
}
