// The one clock every record of `vigil bench` is taken on: milliseconds since
// the epoch with performance.now()'s precision. The worker threads of one
// process read the same monotonic source, so a send time taken on one thread
// and an answer time taken on another can be compared.

/** Milliseconds since the epoch, sub-millisecond, monotonic within the process. */
export const nowMs = (): number => performance.timeOrigin + performance.now();
