// Whether dist/ (what `npm run build` leaves) is at least as new as src/:
// bin/vigil.js runs the bundle when it is, and the bench and the tests use
// the same rule. An installed package ships dist/ without src/, so it is
// current by definition there.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function newestUnder(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** True when `root`/dist was built after the last change under `root`/src (or there is no src/). */
export function distIsCurrent(root) {
  const stamp = join(root, 'dist', '.built');
  if (!existsSync(stamp)) return false;
  const src = join(root, 'src');
  return !existsSync(src) || newestUnder(src) <= statSync(stamp).mtimeMs;
}
