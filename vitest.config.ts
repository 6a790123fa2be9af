import { defineConfig } from 'vitest/config';
import SlowestFirst from './test/support/slowest-first.ts';
import { scaled } from './test/support/time-scale.ts';

/**
 * Files that use what every process of the user shares: the kernel keyring. Any `vigil` command that
 * opens the vault without VIGIL_HOME moves the vigil-vault keys it finds there into its own vault
 * file, so a recipe run of another file could take the key such a test just made. They run after
 * everything else, alone.
 */
const alone = ['test/sdk/vault-keyring.test.ts'];

/**
 * Files that need a module graph of their own: vi.mock replaces a module for the file that asks, and
 * in a shared graph it would not reach a module another file loaded first (nor leave later files alone).
 */
const isolated = ['test/recipes/run-recipe.test.ts'];

/**
 * Node 20 reads and parses the file NODE_EXTRA_CA_CERTS names, and its own root certificates with it, as every
 * process starts, before any code runs: 30 ms of CPU a start where the machine sets it to the system bundle (as
 * ours do), and the suite starts about 1,500 Node processes. None of them makes a TLS connection, so neither
 * vitest's workers nor what the tests start inherit it.
 */
delete process.env.NODE_EXTRA_CA_CERTS;

export default defineConfig({
  test: {
    setupFiles: ['test/support/cleanup.ts'],
    // Limits catch hangs; they are stretched on a small or busy machine.
    testTimeout: scaled(30_000),
    hookTimeout: scaled(60_000),
    pool: 'forks',
    // Much of a file's time is waiting on servers, child processes and
    // timers, so four run at once even on two cores (vitest's default there
    // is one): with three, the two cores idled about a third of the time.
    // Not five: five cluster files at once could hold 105 PostgreSQL
    // sessions, over its 100 (docs/reference/testing.md has the figures).
    maxWorkers: 4,
    sequence: { sequencer: SlowestFirst },
    projects: [
      // A worker runs its files one after another in one module graph (isolate: false) instead of a
      // fresh process and graph per file: 544 against 625 CPU-seconds for the suite, 323 against
      // 355-364 s. Each file still runs test/support/cleanup.ts (setup files are loaded again per file),
      // and vitest resets vi.setConfig and restores spies between files.
      { extends: true, test: { name: 'suite', include: ['test/**/*.test.ts'], exclude: [...alone, ...isolated], isolate: false } },
      { extends: true, test: { name: 'isolated', include: isolated } },
      { extends: true, test: { name: 'alone', include: alone, sequence: { groupOrder: 1 } } },
    ],
  },
});
