// The script the tests run `vigil` with. When dist/ is current (CI builds
// first), the bundle that bin/vigil.js would pick anyway, so that each of the
// suite's thousand CLI starts does not walk src/ again to learn what this
// file learnt once (bin/dist-current.js, about 8 ms of CPU a start); the
// sources through bin/vigil.js otherwise. The tests of bin/vigil.js itself,
// the README's commands and the packed package, run bin/vigil.js as users do.
import { join, resolve } from 'node:path';
import { distIsCurrent } from '../../bin/dist-current.js';

export const repoRoot = resolve(import.meta.dirname, '../..');

export const cliEntry = distIsCurrent(repoRoot) ? join(repoRoot, 'dist', 'bundle', 'main.js') : join(repoRoot, 'bin', 'vigil.js');
