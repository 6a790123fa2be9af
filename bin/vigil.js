#!/usr/bin/env node
// Runs the compiled CLI (dist/bundle/, the bundle of dist/cli/main.js) when it is there and up to date with src/
// (an installed package ships dist/ only); otherwise runs the TypeScript
// sources through tsx, so that a fresh clone works without a build step.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stamp = join(root, 'dist', '.built');

function newestUnder(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function distIsCurrent() {
  if (process.env.VIGIL_FROM_SOURCE === '1' || !existsSync(stamp)) return false;
  const src = join(root, 'src');
  return !existsSync(src) || newestUnder(src) <= statSync(stamp).mtimeMs;
}

if (distIsCurrent()) {
  await import('../dist/bundle/main.js');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
