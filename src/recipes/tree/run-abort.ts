// A run's own abort controller, aborted with its parent's signal: cancelling a
// run cancels every child run and step below it, but not its siblings. What
// stopped it (a budget, fail_fast, a signal) travels as the signal's reason, so
// that what did not start can say why.
import { sharedController } from '../../timing/shared-controller.ts';

/**
 * Why a run was stopped, as its abort signal's reason. Its name is AbortError, so fetch and every wait
 * that tells an abort by its name treat it as any other abort.
 */
export class RunStopped extends Error {
  override readonly name = 'AbortError';
}

/** Why the run of `signal` stopped, for lines such as "not started: …"; a plain abort reads "the run was cancelled". */
export function stoppedWhy(signal: AbortSignal): string {
  return signal.reason instanceof RunStopped ? signal.reason.message : 'the run was cancelled';
}

export interface RunAbort {
  readonly controller: AbortController;
  /** Stops following the parent (the run has finished). */
  detach(): void;
}

export function runAbort(parent: AbortSignal): RunAbort {
  // Every child and step listens to this signal.
  const controller = sharedController();
  const onParentAbort = (): void => controller.abort(parent.reason);
  if (parent.aborted) controller.abort(parent.reason);
  else parent.addEventListener('abort', onParentAbort, { once: true });
  return { controller, detach: () => parent.removeEventListener('abort', onParentAbort) };
}
