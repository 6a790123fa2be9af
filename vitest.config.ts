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

export default defineConfig({
  test: {
    setupFiles: ['test/support/cleanup.ts'],
    // Limits catch hangs; they are stretched on a small or busy machine.
    testTimeout: scaled(30_000),
    hookTimeout: scaled(60_000),
    pool: 'forks',
    // Much of a file's time is waiting on servers, child processes and
    // timers, so four run at once even on two cores (vitest's default there
    // is one): the suite needs 700-760 CPU-seconds, and CI's runs with three
    // at once took 490-545 s, the two cores idle about a third of the time
    // (docs/reference/testing.md has the figures).
    maxWorkers: 4,
    sequence: { sequencer: SlowestFirst },
    projects: [
      { extends: true, test: { name: 'suite', include: ['test/**/*.test.ts'], exclude: alone } },
      { extends: true, test: { name: 'alone', include: alone, sequence: { groupOrder: 1 } } },
    ],
  },
});
