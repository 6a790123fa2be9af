// The listeners of one emitter, typed by an interface of event → handler
// signature (as BullMQ's WorkerListener): `on`, `off` and `emit` are checked
// against it, so a listener of the wrong shape or an unknown event does not compile.

/** An interface whose every member is an event's handler. */
export type ListenerInterface<L> = { [E in keyof L]: (...args: never[]) => unknown };

export class Listeners<L extends ListenerInterface<L>> {
  private readonly byEvent = new Map<keyof L, Set<L[keyof L]>>();

  /** Calls `listener` on each `event`; returns the function that stops it. */
  on<E extends keyof L>(event: E, listener: L[E]): () => void {
    let set = this.byEvent.get(event);
    if (!set) {
      set = new Set();
      this.byEvent.set(event, set);
    }
    set.add(listener);
    return () => this.off(event, listener);
  }

  off<E extends keyof L>(event: E, listener: L[E]): void {
    this.byEvent.get(event)?.delete(listener);
  }

  /** Someone listens to `event`. */
  has(event: keyof L): boolean {
    return (this.byEvent.get(event)?.size ?? 0) > 0;
  }

  emit<E extends keyof L>(event: E, ...args: Parameters<L[E]>): void {
    const set = this.byEvent.get(event);
    if (!set) return;
    for (const listener of set) (listener as (...given: Parameters<L[E]>) => unknown)(...args);
  }
}
