// Looks a program up on PATH the way a shell would.
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

export function findOnPath(name: string, path: string = process.env.PATH ?? ''): string | null {
  const candidates = name.includes('/') ? [name] : path.split(delimiter).filter(Boolean).map((d) => join(d, name));
  for (const c of candidates) {
    try {
      if (!statSync(c).isFile()) continue;
      accessSync(c, constants.X_OK);
      return isAbsolute(c) ? c : join(process.cwd(), c);
    } catch {
      // not here
    }
  }
  return null;
}
