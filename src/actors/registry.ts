// A registry of independent actors of one kind, keyed by id. Actors are made
// resident on first use from their stored row, and a failed actor is dropped
// so that the next use restores it from the store: that is the supervision.
// (Spawning every entity as a child of one parent machine is O(n²) in XState;
// see runtime-facts.md. Sharing one XState system through the `parent` option
// would save about 1.6 KB per actor, but each stop then scans every delayed
// event of the whole system, O(n²) again when thousands are evicted.) Residency is bounded: the least recently used
// actors beyond a cap are stopped, unless something holds them.
import type { AnyActorRef } from 'xstate';

export class ActorRegistry<A extends AnyActorRef> {
  /** In least-recently-used order: the first entry is the coldest. */
  private readonly resident = new Map<string, A>();
  private readonly holds = new Map<string, number>();

  constructor(
    readonly kind: string,
    private readonly restore: (key: string) => A | undefined,
    private readonly onFailure: (kind: string, key: string, error: unknown) => void,
  ) {}

  /** The resident actor, restored from the store when it is not in memory; undefined when none exists. */
  get(key: string): A | undefined {
    const actor = this.resident.get(key);
    if (!actor) return this.adopt(key, this.restore(key));
    this.resident.delete(key);
    this.resident.set(key, actor);
    return actor;
  }

  /** Keeps the actor resident until the returned release is called (a waiting pull, an open stream). */
  hold(key: string): () => void {
    this.holds.set(key, (this.holds.get(key) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.holds.get(key) ?? 1) - 1;
      if (left <= 0) this.holds.delete(key);
      else this.holds.set(key, left);
    };
  }

  /**
   * Stops the coldest actors until at most `cap` are resident, skipping held
   * ones. Only safe when no write of these actors is waiting for a commit.
   */
  evictBeyond(cap: number, onEvict: (key: string, actor: A) => void): void {
    if (this.resident.size <= cap) return;
    let excess = this.resident.size - cap;
    for (const [key, actor] of this.resident) {
      if (excess <= 0) break;
      if (this.holds.has(key)) continue;
      this.resident.delete(key);
      onEvict(key, actor);
      actor.stop();
      excess--;
    }
  }

  /** Registers a newly created (already started) actor. */
  add(key: string, actor: A): A {
    return this.adopt(key, actor)!;
  }

  isHeld(key: string): boolean {
    return this.holds.has(key);
  }

  isResident(key: string): boolean {
    return this.resident.has(key);
  }

  get size(): number {
    return this.resident.size;
  }

  entries(): IterableIterator<[string, A]> {
    return this.resident.entries();
  }

  keys(): IterableIterator<string> {
    return this.resident.keys();
  }

  /** Stops and forgets the actor; its row stays in the store. */
  evict(key: string): void {
    const actor = this.resident.get(key);
    if (!actor) return;
    this.resident.delete(key);
    actor.stop();
  }

  stopAll(): void {
    for (const key of [...this.resident.keys()]) this.evict(key);
  }

  private adopt(key: string, actor: A | undefined): A | undefined {
    if (!actor) return undefined;
    this.resident.set(key, actor);
    actor.subscribe({
      error: (error: unknown) => {
        if (this.resident.get(key) === actor) this.resident.delete(key);
        this.onFailure(this.kind, key, error);
      },
    });
    return actor;
  }
}
