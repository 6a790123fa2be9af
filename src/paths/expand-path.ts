// A path as a user writes it in a recipe, a trigger or a flag.
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

/** `~` and `~/…` are in the home folder; a relative path is from `base`; an absolute one stays as written. */
export function expandPath(path: string, base: string): string {
  if (path === '~') return homedir();
  if (path.startsWith('~/')) return join(homedir(), path.slice(2));
  return isAbsolute(path) ? path : resolve(base, path);
}
