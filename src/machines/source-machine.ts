// A live source's lifecycle (§18): starting → watching ⇄ backing_off →
// stopped. The machine does no I/O: the watcher is the invoked `watch` actor,
// which src/sources provides per kind. It reports CONTACT when it reached its
// counterpart and FAIL (or throws) when it lost it; a failure stops the
// watcher and waits an exponentially growing delay before starting again.
import { assign, fromCallback, setup } from 'xstate';

export interface SourceContext {
  readonly monitor: string;
  readonly kind: string;
  /** Failures since the last contact; drives the backoff delay. */
  failures: number;
  lastError: string | null;
  lastContactMs: number | null;
  readonly minBackoffMs: number;
  readonly maxBackoffMs: number;
}

export interface SourceInput {
  monitor: string;
  kind: string;
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

export type SourceEvent =
  | { type: 'CONTACT'; now: number }
  | { type: 'FAIL'; error: string }
  | { type: 'STOP' };

function reasonOf(error: unknown): string {
  return typeof error === 'string' ? error : error instanceof Error ? error.message : String(error);
}

/** The delay before the next attempt after `failures` failures in a row. */
export function backoffDelay(failures: number, minMs: number, maxMs: number): number {
  return Math.min(maxMs, minMs * 2 ** Math.max(0, Math.min(failures - 1, 20)));
}

export const sourceMachine = setup({
  types: {
    context: {} as SourceContext,
    events: {} as SourceEvent,
    input: {} as SourceInput,
  },
  actors: {
    // Replaced by the kind's watcher through `provide`; it receives the actor's input.
    watch: fromCallback<SourceEvent, SourceInput>(() => undefined),
  },
  actions: {
    contact: assign(({ event }) => ({
      failures: 0,
      lastError: null,
      lastContactMs: (event as Extract<SourceEvent, { type: 'CONTACT' }>).now,
    })),
    failed: assign(({ context, event }) => ({
      failures: context.failures + 1,
      lastError: reasonOf((event as { error?: unknown }).error),
    })),
  },
  delays: {
    backoff: ({ context }) => backoffDelay(context.failures, context.minBackoffMs, context.maxBackoffMs),
  },
}).createMachine({
  id: 'source',
  context: ({ input }) => ({
    monitor: input.monitor,
    kind: input.kind,
    failures: 0,
    lastError: null,
    lastContactMs: null,
    minBackoffMs: input.minBackoffMs ?? 1000,
    maxBackoffMs: input.maxBackoffMs ?? 60_000,
  }),
  initial: 'running',
  states: {
    running: {
      invoke: {
        src: 'watch',
        input: ({ context }) => ({ monitor: context.monitor, kind: context.kind }),
        onError: { target: 'backing_off', actions: 'failed' },
      },
      initial: 'starting',
      states: {
        starting: { on: { CONTACT: { target: 'watching', actions: 'contact' } } },
        watching: { on: { CONTACT: { actions: 'contact' } } },
      },
      on: { FAIL: { target: 'backing_off', actions: 'failed' } },
    },
    backing_off: {
      after: { backoff: { target: 'running' } },
    },
    stopped: { type: 'final' },
  },
  on: { STOP: '.stopped' },
});

/** The state name as the dashboard and the inspector show it. */
export function sourceStateOf(value: unknown): 'starting' | 'watching' | 'backing_off' | 'stopped' {
  if (value === 'backing_off' || value === 'stopped') return value;
  if (typeof value === 'object' && value !== null && (value as { running?: string }).running === 'watching') return 'watching';
  return 'starting';
}
