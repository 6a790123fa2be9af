// Subscriptions past the resident cap are rows, not actors. What is written to
// such a row waits for the next group commit; until then a restore must read
// it from here, not the older row the store still holds.
import type { SubscriptionRow } from '../store/records.ts';
import type { Store } from '../store/store.ts';

export class ColdSubscriptionRows {
  private readonly uncommitted = new Map<string, SubscriptionRow>();

  constructor(
    private readonly store: Store,
    /** The resident actor's row, for a subscription restored before the commit. */
    private readonly residentRow: (id: string) => SubscriptionRow | undefined,
  ) {}

  /** The subscription's row as last written, committed or not. */
  get(id: string): SubscriptionRow | undefined {
    return this.uncommitted.get(id) ?? this.store.subscription(id);
  }

  /** Writes the row of a subscription that is not resident. */
  put(id: string, row: SubscriptionRow): void {
    this.uncommitted.set(id, row);
    this.store.putSubscription(id, () => this.residentRow(id) ?? row);
  }

  /** The monitor was reloaded from the database (a cluster node's batch was refused): its rows there stand. */
  forgetMonitor(mkey: number): void {
    for (const [id, row] of this.uncommitted) if (row.record.mkey === mkey) this.uncommitted.delete(id);
  }

  /** Everything written so far is committed. */
  committed(): void {
    this.uncommitted.clear();
  }
}
