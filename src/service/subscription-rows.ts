// The rows of subscriptions as the service reads and writes them: a
// subscription's row is its resident actor's state, else the row written
// without an actor (cold-subscription-rows.ts) until it is committed, else the
// store's. Every change of a subscription is stored through here, so that its
// open streams hear of each one.
import type { RootSystem } from '../actors/root-system.ts';
import { subscriptionStateOf, touchedSubscription } from '../machines/subscription-machine.ts';
import type { SubscriptionRow } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import { ColdSubscriptionRows } from './cold-subscription-rows.ts';
import type { SubscriptionWatchers } from './subscription-watchers.ts';
import { residentActor } from './resident-actor.ts';

export class SubscriptionRows {
  private readonly cold: ColdSubscriptionRows;

  constructor(
    private readonly store: Store,
    private readonly system: RootSystem,
    private readonly watchers: SubscriptionWatchers,
    private readonly now: () => number,
  ) {
    this.cold = new ColdSubscriptionRows(store, (id) => (system.subscriptions.isResident(id) ? this.row(id) : undefined));
  }

  /** The row an actor is restored from, committed or not. */
  load(id: string): SubscriptionRow | undefined {
    return this.cold.get(id);
  }

  /** A new subscription: an actor when the resident cap allows, else a row. */
  add(row: SubscriptionRow): void {
    const id = row.record.id;
    this.watchers.changed(id);
    if (this.system.admitSubscription(row)) this.persist(id);
    else this.cold.put(id, row);
  }

  /**
   * An open stream's periodic activity, which keeps its subscription from mute retirement. A resident
   * actor gets the event; a subscription that is only a row has the row rewritten and its deadline
   * moved, without building an actor for it (thousands of open streams would otherwise restore and
   * evict actors all the time). Open streams are not told: activity changes no token or state.
   */
  active(id: string, shownUpTo: number): void {
    const now = this.now();
    if (this.system.subscriptions.isResident(id)) {
      this.system.subscriptions.get(id)!.send({ type: 'ACTIVITY', now, shownUpTo });
      this.store.putSubscription(id, () => this.row(id));
      return;
    }
    const stored = this.cold.get(id);
    if (stored?.state !== 'live') return;
    const row = { state: stored.state, record: touchedSubscription(stored.record, now, shownUpTo) };
    this.cold.put(id, row);
    this.system.wakeSubscriptionAt(id, row.record.lastActivityMs + row.record.muteMs);
  }

  /**
   * The subscription as it stands, from its actor when resident and from its row otherwise: reading it
   * never restores an actor (an open stream re-checks after every change, thousands at once when a
   * cluster node reloads a monitor).
   */
  current(id: string): SubscriptionRow | undefined {
    return this.system.subscriptions.isResident(id) ? this.row(id) : this.cold.get(id);
  }

  /** Stores the actor's state with the next commit and tells the subscription's open streams. */
  persist(id: string): void {
    this.store.putSubscription(id, () => this.row(id));
    this.watchers.changed(id);
  }

  /** The actor's state as a row (restored from the store when it is not resident). */
  row(id: string): SubscriptionRow {
    const snapshot = residentActor(this.system.subscriptions, 'subscription', id).getSnapshot();
    return { state: subscriptionStateOf(snapshot.value), record: snapshot.context.subscription };
  }

  /** Everything written so far is committed. */
  committed(): void {
    this.cold.committed();
  }

  /** The monitor was reloaded from the database: its rows there stand. */
  forgetMonitor(mkey: number): void {
    this.cold.forgetMonitor(mkey);
  }
}
