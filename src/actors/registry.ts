// A registry of independent actors of one kind, keyed by id. Actors are made
// resident on first use from their stored row, and a failed actor is dropped
// so that the next use restores it from the store: that is the supervision.
// (Spawning every entity as a child of one parent machine is O(n²) in XState;
// see runtime-facts.md.)
import type { AnyActorRef } from 'xstate';

export class ActorRegistry<A extends AnyActorRef> {
  private readonly resident = new Map<string, A>();

  constructor(
    readonly kind: string,
    private readonly restore: (key: string) => A | undefined,
    private readonly onFailure: (kind: string, key: string, error: unknown) => void,
  ) {}

  /** The resident actor, restored from the store when it is not in memory; undefined when none exists. */
  get(key: string): A | undefined {
    return this.resident.get(key) ?? this.adopt(key, this.restore(key));
  }

  /** Registers a newly created (already started) actor. */
  add(key: string, actor: A): A {
    return this.adopt(key, actor)!;
  }

  isResident(key: string): boolean {
    return this.resident.has(key);
  }

  get size(): number {
    return this.resident.size;
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
