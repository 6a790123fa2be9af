// A run's own abort controller, aborted with its parent's signal: cancelling a
// run cancels every child run and step below it, but not its siblings.
import { setMaxListeners } from 'node:events';

export interface RunAbort {
  readonly controller: AbortController;
  /** Stops following the parent (the run has finished). */
  detach(): void;
}

export function runAbort(parent: AbortSignal): RunAbort {
  const controller = new AbortController();
  // Every child and step listens to this signal: as many listeners as the run has at once is no leak.
  // (Not 0 for unlimited: Node 20's getMaxListeners throws on a signal set to 0.)
  setMaxListeners(100_000, controller.signal);
  const onParentAbort = (): void => controller.abort();
  if (parent.aborted) controller.abort();
  else parent.addEventListener('abort', onParentAbort, { once: true });
  return { controller, detach: () => parent.removeEventListener('abort', onParentAbort) };
}
