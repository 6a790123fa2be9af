import { defineConfig } from 'vitest/config';
import SlowestFirst from './test/support/slowest-first.ts';
import { scaled } from './test/support/time-scale.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/support/cleanup.ts'],
    // Limits catch hangs; they are stretched on a small or busy machine.
    testTimeout: scaled(30_000),
    hookTimeout: scaled(60_000),
    pool: 'forks',
    // Most files wait on servers and child processes rather than compute, so
    // three run at once even on two cores (vitest's default there is one):
    // on this 2-vCPU machine the suite took 785 s with three, 977 s with two.
    maxWorkers: 3,
    sequence: { sequencer: SlowestFirst },
  },
});
