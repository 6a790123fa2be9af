// Leases that take-next grants and completes without an actor (lease-cold.ts)
// are rows only. What is written to such a row waits for the next group
// commit; until then a restore (an actor made for a renew, a release, a named
// claim, an expiry) must read it from here, not the older row the store holds.
// After the commit the most recent rows stay here too (at most `keepRows`),
// so that the completion that follows a grant reads no row back: an actor
// made from one takes it over (the actor is the lease's state from then on,
// and its writes reach the store before it can leave memory).
import type { LeaseRow } from '../store/records.ts';

const keepRows = 4096;

export class ColdLeaseRows {
  /** Rows in the order written: the first is the oldest. */
  private readonly rows = new Map<string, LeaseRow>();
  /** Keys written since the last commit: never dropped before it. */
  private uncommitted = new Set<string>();

  get(key: string): LeaseRow | undefined {
    return this.rows.get(key);
  }

  set(key: string, row: LeaseRow): void {
    this.rows.delete(key);
    this.rows.set(key, row);
    this.uncommitted.add(key);
  }

  /** The rows kept, newest first. */
  *newestFirst(): IterableIterator<[string, LeaseRow]> {
    const keys = [...this.rows.keys()];
    for (let i = keys.length - 1; i >= 0; i--) yield [keys[i]!, this.rows.get(keys[i]!)!];
  }

  /** An actor was made from the row: from now on it is the lease's state. */
  adopted(key: string): void {
    this.rows.delete(key);
    this.uncommitted.delete(key);
  }

  /** The monitor was reloaded from the database (a cluster node caught up, or its batch was refused): its rows there stand. */
  forgetMonitor(mkey: number): void {
    const prefix = `${mkey}:`;
    for (const key of this.rows.keys()) {
      if (key.startsWith(prefix)) {
        this.rows.delete(key);
        this.uncommitted.delete(key);
      }
    }
  }

  /** Everything written so far is committed: the oldest rows past the bound may go. */
  committed(): void {
    this.uncommitted = new Set();
    if (this.rows.size <= keepRows) return;
    let excess = this.rows.size - keepRows;
    for (const key of this.rows.keys()) {
      if (excess-- <= 0) break;
      this.rows.delete(key);
    }
  }
}
