// Preloaded into a profiled server (with --expose-gc): SIGUSR2 runs a full
// collection, so that memory read right after is live memory, not garbage.
process.on('SIGUSR2', () => globalThis.gc?.());
