// The one in-process channel for product events (the webhook vocabulary of
// recipes-and-sdk.md §6). Producers (CIR captures, ingests, budgets) emit here
// and know nothing of who listens; the webhook forwarder and the server's
// delivery queue subscribe. A listener that throws or rejects never breaks the
// producer; a short-lived CLI process awaits `settleEvents()` before it exits
// so that an asynchronous listener (an HTTP forward) is not cut off.

export const eventTypes = ['cir.capture', 'training.ingested', 'usage.limit_reached'] as const;
export type VigilEventType = (typeof eventTypes)[number];

export interface VigilEvent {
  type: VigilEventType;
  timestamp: string;
  data: Record<string, unknown>;
}

export type EventListener = (event: VigilEvent) => unknown;

const listeners = new Map<VigilEventType | '*', Set<EventListener>>();
const pending = new Set<Promise<unknown>>();
const failures: Array<{ event: VigilEvent; error: unknown }> = [];

export function isEventType(value: unknown): value is VigilEventType {
  return typeof value === 'string' && (eventTypes as readonly string[]).includes(value);
}

/** Subscribe to one event type, or to all with '*'. Returns the unsubscribe function. */
export function onEvent(type: VigilEventType | '*', listener: EventListener): () => void {
  let set = listeners.get(type);
  if (!set) {
    set = new Set();
    listeners.set(type, set);
  }
  set.add(listener);
  return () => {
    set.delete(listener);
  };
}

export function emitEvent(type: VigilEventType, data: Record<string, unknown>): VigilEvent {
  const event: VigilEvent = { type, timestamp: new Date().toISOString(), data };
  for (const key of [type, '*'] as const) {
    for (const listener of listeners.get(key) ?? []) deliver(listener, event);
  }
  return event;
}

function deliver(listener: EventListener, event: VigilEvent): void {
  try {
    const result = listener(event);
    if (result && typeof (result as Promise<unknown>).then === 'function') {
      const tracked = (result as Promise<unknown>)
        .catch((error: unknown) => {
          failures.push({ event, error });
        })
        .finally(() => pending.delete(tracked));
      pending.add(tracked);
    }
  } catch (error) {
    failures.push({ event, error });
  }
}

/** Resolves when every asynchronous listener started so far has finished. */
export async function settleEvents(): Promise<void> {
  while (pending.size > 0) await Promise.allSettled([...pending]);
}

/** Listener failures since the last call (for logging by the process that owns the channel). */
export function takeListenerFailures(): Array<{ event: VigilEvent; error: unknown }> {
  return failures.splice(0, failures.length);
}
