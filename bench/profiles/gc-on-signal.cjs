// Preloaded into a profiled server (with --expose-gc): SIGUSR2 runs a full,
// compacting collection, so that memory read right after is live memory, not
// garbage nor the free pages a burst left in the heap. V8's memory reducer does
// the same on its own once a server quiets down (some 8 s after allocation
// slows; bench/README.md, "memory per stream"), which a benchmark cannot wait for.
const v8 = require('node:v8');

process.on('SIGUSR2', () => {
  v8.setFlagsFromString('--compact-on-every-full-gc');
  globalThis.gc?.();
  v8.setFlagsFromString('--no-compact-on-every-full-gc');
});
