// Where a project's .vigil/ and vigil.yml live, found from any folder inside it.
import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** The nearest directory at or above `cwd` holding `.vigil/` or `vigil.yml`; else `cwd`. */
export function findProjectRoot(cwd: string = process.cwd()): string {
  let dir = resolve(cwd);
  for (;;) {
    if (existsSync(join(dir, 'vigil.yml')) || isDir(join(dir, '.vigil'))) return dir;
    const up = dirname(dir);
    if (up === dir) return resolve(cwd);
    dir = up;
  }
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
