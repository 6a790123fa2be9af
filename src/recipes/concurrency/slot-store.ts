// Where the slots of a cap are kept: lock files on this machine
// (local-slots.ts) or leases on a Vigil server (server-slots.ts). A waiter
// enters a pool's line, tries to take a slot whenever the pool may have
// changed, and leaves the line when it got one or gave up.

/** Who holds a slot (or waits for one): shown as "run <run> step <step>". */
export interface SlotHolder {
  run: string;
  step: string;
}

export interface SlotGrant {
  readonly slot: number;
  /** Frees the slot (completes its lease). */
  release(): Promise<void>;
}

/**
 * A grant, or who holds the slots ("run <id> step <label>" each) and how many wait ahead of this one on
 * the machine; or, with `unavailable`, why no slot can be asked for just now (the slots' server away, the
 * pool's slots not published yet): the wait goes on.
 */
export type TakeResult = { grant: SlotGrant } | { holders: string[]; ahead?: number; unavailable?: string };

export const holderText = (h: SlotHolder): string => `run ${h.run} step ${h.step}`;

export interface SlotWaiter {
  /** A free slot, or who holds them all (or, locally, who waits ahead on the machine). */
  tryTake(): Promise<TakeResult>;
  /** Resolves when a slot may have been freed, or after a while. */
  changed(signal: AbortSignal): Promise<void>;
  /** Leaves the line (after a grant, or when the wait is given up). */
  leave(): Promise<void>;
}

export interface SlotStore {
  /** Where the slots are kept, for the run's notes: `lock files in ~/.vigil/concurrency`. */
  readonly where: string;
  /** `signal`: the step's cancellation, which cuts short what the store is asking (a claim of a paused server). */
  enter(pool: string, cap: number, who: SlotHolder, signal: AbortSignal): Promise<SlotWaiter>;
  close(): Promise<void>;
}
