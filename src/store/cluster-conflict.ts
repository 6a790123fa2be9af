// A batch that lost the race for a monitor: another node changed the monitor
// since this node last read it. The batch was rolled back everywhere; the
// requests in it are run again on fresh state.
export class ClusterConflictError extends Error {
  override readonly name = 'ClusterConflictError';
  constructor(
    readonly monitors: ReadonlySet<number>,
    message = 'another node changed the monitor first',
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export function isClusterConflict(error: unknown): error is ClusterConflictError {
  return error instanceof ClusterConflictError;
}

/**
 * A batch whose timer or source writes were made under an ownership token that is no longer current
 * (another node took the monitor over, or this node's lease lapsed): refused like a lost race, and
 * this node gives up `fenced` at once (src/cluster/ownership.ts).
 */
export class FencedOffError extends ClusterConflictError {
  constructor(
    monitors: ReadonlySet<number>,
    readonly fenced: readonly number[],
  ) {
    super(monitors, `this node no longer owns the timers of monitor(s) ${fenced.join(', ')}: another node took them over`);
  }
}
