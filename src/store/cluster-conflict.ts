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
