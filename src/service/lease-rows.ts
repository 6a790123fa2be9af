// The rows of a monitor's leases as the service reads and writes them: a
// lease's row is its resident actor's state, else the row written without an
// actor (take-next's grants and completions, lease-cold.ts) until it is
// committed, else the store's. Every change of a lease is stored through here,
// so that take-next's lines of its monitor hear of each one.
import { leaseKey, type RootSystem } from '../actors/root-system.ts';
import { leaseStateOf } from '../machines/lease-machine.ts';
import type { LeaseRecord, LeaseRow } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import { ColdLeaseRows } from './cold-lease-rows.ts';
import type { Standing } from './take-queue.ts';
import type { TakeQueues } from './take-queues.ts';
import { residentActor } from './resident-actor.ts';

export class LeaseRows {
  /** Lease rows written without an actor (take-next's grants and completions), until they are committed. */
  private readonly cold = new ColdLeaseRows();

  constructor(
    private readonly store: Store,
    private readonly system: RootSystem,
    private readonly queues: () => TakeQueues,
    /** Leases no actor holds are changed on their rows (false under --inspect, to watch every machine). */
    private readonly asRows: boolean,
  ) {}

  /**
   * Whether a change of this lease is made on its row, without an actor (lease-cold.ts): when no actor
   * holds it, unless the server runs with --inspect, whose inspector is there to watch every lease's
   * machine take its transitions.
   */
  changedAsRow(mkey: number, subject: string): boolean {
    return this.asRows && !this.system.leases.isResident(leaseKey(mkey, subject));
  }

  /** The most recent leases changed as rows that no actor holds now (the dashboard's Actors tab), newest first. */
  *withoutActor(): IterableIterator<[string, LeaseRow]> {
    for (const entry of this.cold.newestFirst()) if (!this.system.leases.isResident(entry[0])) yield entry;
  }

  /** The row an actor is restored from (the actor holds the lease's state from then on). */
  load(key: string): LeaseRow | undefined {
    const colon = key.indexOf(':');
    const row = this.stored(Number(key.slice(0, colon)), key.slice(colon + 1));
    this.cold.adopted(key);
    return row;
  }

  /** On start: the held leases' expiries resume from their stored deadlines; the actors stay on disk until due or used. */
  wakeStoredDeadlines(): void {
    for (const { mkey, subject, deadlineMs } of this.store.leaseDeadlines()) this.system.wakeLeaseAt(leaseKey(mkey, subject), deadlineMs);
  }

  /** Stores the lease's actor state with the next commit and tells take-next's lines. */
  persist(mkey: number, subject: string): void {
    const key = leaseKey(mkey, subject);
    this.store.putLease(mkey, subject, () => this.row(key));
    // (An actor expiring as it is restored is not resident yet: freed() tells the lines of that one.)
    const queues = this.queues();
    if (queues.has(mkey) && this.system.leases.isResident(key)) queues.changed(mkey, subject, this.standing(mkey, subject)!);
  }

  /** A lease's row as last written, committed or not; it restores no actor. */
  stored(mkey: number, subject: string): LeaseRow | undefined {
    return this.cold.get(leaseKey(mkey, subject)) ?? this.store.lease(mkey, subject);
  }

  /** The lease as it stands now: its resident actor's, else its row (undefined when never claimed). */
  current(mkey: number, subject: string): LeaseRow | undefined {
    const key = leaseKey(mkey, subject);
    return this.system.leases.isResident(key) ? this.row(key) : this.stored(mkey, subject);
  }

  /**
   * Writes the row of a lease no actor holds (take-next's grant or completion, lease-cold.ts). Its expiry
   * is the deadline scheduler's, which restores an actor from the row when it comes due; an actor made
   * before the commit reads the row from here, and its own state is what the commit stores.
   */
  putCold(row: LeaseRow): void {
    const { mkey, subject } = row.record;
    const key = leaseKey(mkey, subject);
    this.cold.set(key, row);
    this.store.putLease(mkey, subject, () => (this.system.leases.isResident(key) ? this.row(key) : row));
    if (row.state === 'held' && row.record.expiresMs !== null) this.system.wakeLeaseAt(key, row.record.expiresMs);
    else this.system.forgetLeaseDeadline(key);
    const queues = this.queues();
    if (queues.has(mkey)) queues.changed(mkey, subject, { state: row.state, expiresMs: row.record.expiresMs, queued: row.record.queued ?? null });
  }

  /** A lease expired: it is free for take-next again. */
  freed(lease: LeaseRecord): void {
    this.queues().changed(lease.mkey, lease.subject, { state: 'free', expiresMs: null, queued: lease.queued ?? null });
  }

  /** A lease as it stands now: its resident actor, else its stored row (undefined when never claimed); restores nothing. */
  standing(mkey: number, subject: string, stored?: Standing | null): Standing | undefined {
    const key = leaseKey(mkey, subject);
    if (!this.system.leases.isResident(key)) {
      const cold = this.cold.get(key);
      if (cold) return { state: cold.state, expiresMs: cold.record.expiresMs, queued: cold.record.queued ?? null };
      // `stored`: the row as a read of the log just found it (null: none), what the store would answer.
      if (stored !== undefined) return stored ?? undefined;
      return this.store.queue.lease(mkey, subject);
    }
    const snapshot = this.system.leases.get(key)!.getSnapshot();
    const lease = snapshot.context.lease;
    return { state: leaseStateOf(snapshot.value), expiresMs: lease.expiresMs, queued: lease.queued ?? null };
  }

  /** The lease's actor's state as a row (restored from the store when it is not resident). */
  row(key: string): LeaseRow {
    const snapshot = residentActor(this.system.leases, 'lease', key).getSnapshot();
    return { state: leaseStateOf(snapshot.value), record: snapshot.context.lease };
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
