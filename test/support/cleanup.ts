// Setup file (vitest.config.ts): after each test file, stop every process its
// tests started and did not stop (a failed or timed-out test's server), then
// remove the folders its tests made with tempDir(), so that no run leaves
// processes or /tmp/vigil-* behind. After-hooks run in reverse order, so
// these run after the file's own (which stop servers and unmount first).
import { rmSync } from 'node:fs';
import { afterAll } from 'vitest';
import { stopChildren } from './children.ts';
import { tempDirs } from './server-process.ts';

afterAll(async () => {
  const stopped = await stopChildren();
  if (stopped.length > 0) console.warn(`stopped ${stopped.length} process(es) the tests left running:\n  ${stopped.join('\n  ')}`);
  for (const dir of tempDirs) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // Still mounted or busy: the file's own cleanup reports that.
    }
    tempDirs.delete(dir);
  }
});
