// Setup file (vitest.config.ts): after each test file, remove the folders
// its tests made with tempDir(), so that no run leaves /tmp/vigil-* behind.
// After-hooks run in reverse order, so this one runs after the file's own
// (which stop servers and unmount what they mounted first).
import { rmSync } from 'node:fs';
import { afterAll } from 'vitest';
import { tempDirs } from './server-process.ts';

afterAll(() => {
  for (const dir of tempDirs) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // Still mounted or busy: the file's own cleanup reports that.
    }
    tempDirs.delete(dir);
  }
});
