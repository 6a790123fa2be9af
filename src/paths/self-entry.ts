// The script a vigil process runs to start another vigil process (a recipe
// run for sequence.run, a trigger's target, the dispatch runner). Running
// from dist/, that is the bundle this process itself runs: dist/ was current
// when it started, and bin/vigil.js would only walk src/ again to say so.
// Running from the sources (tsx), it is bin/vigil.js, which picks for itself.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(import.meta.url);
// src/paths/self-entry.ts, or dist/paths/self-entry.js (the bundle keeps each module's own place).
const root = join(here, '..', '..', '..');

export const vigilEntry = here.endsWith('.ts') ? join(root, 'bin', 'vigil.js') : join(root, 'dist', 'bundle', 'main.js');
