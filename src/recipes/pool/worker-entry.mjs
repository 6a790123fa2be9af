// Piscina worker entry. In a build (dist/) the compiled worker sits next to
// this file. From sources, worker threads do not inherit a loader registered
// through tsx's API (as bin/vigil.js does), so register it here first.
import { existsSync } from 'node:fs';

const compiled = new URL('./step-worker.js', import.meta.url);
let mod;
if (existsSync(compiled)) {
  mod = await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  mod = await import('./step-worker.ts');
}
export default mod.default;
