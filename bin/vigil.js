#!/usr/bin/env node
// Runs the compiled CLI (dist/bundle/, the bundle of dist/cli/main.js) when it is there and up to date with src/
// (an installed package ships dist/ only); otherwise runs the TypeScript
// sources through tsx, so that a fresh clone works without a build step.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { distIsCurrent } from './dist-current.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

if (process.env.VIGIL_FROM_SOURCE !== '1' && distIsCurrent(root)) {
  await import('../dist/bundle/main.js');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
