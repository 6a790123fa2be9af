// The line take-next serves (protocol.md §21) for one monitor and one set of
// filters: the subjects that appeared on matching observations, oldest first,
// kept in memory as an index over the log instead of a scan per claim.
//
// A frontier moves forward through the monitor's observations (a range read
// on their primary key, `scanChunk` rows at a time, only when the line runs
// short). Each subject it passes gets an entry keyed by the seq where it first
// matched: `ready` (free or never leased: in the heap), `held` (someone holds
// it) or `done` (completed by a named claim). A completed subject that
// take-next granted is forgotten: its lease keeps `queued`, the seq it was
// found at, which puts it back in line if it is ever freed. Every change of a
// lease on the monitor is reported here (service.leaseRows.persist, a cluster
// node's reload), so a freed subject returns to the heap at its place.
//
// The lease's actor has the last word on every grant: the line only proposes.
// Memory is bounded: past `maxEntries` the `done` and then `held` entries go,
// and the queue turns lossy: a freed subject it no longer knows is then looked
// up in the log (a range read from the retention floor), the one read that
// grows with the log, and only past the bound.
import type { Filter } from '../protocol/filter.ts';
import type { LeaseState } from '../store/records.ts';
import type { Feed } from './feed.ts';

/** Rows read per step of the frontier. */
export const scanChunk = 256;
/** Entries one line keeps at most (about 100 bytes each). */
export const maxEntries = 8192;

export interface Standing {
  readonly state: LeaseState;
  readonly expiresMs: number | null;
  readonly queued: number | null;
}

/** What a line reads: the log and the leases of its monitor (service.ts supplies them). */
export interface QueueHost {
  /** With each subject's stored lease as the same read found it (null: none). */
  subjectsAfter(mkey: number, after: number, upTo: number, filters: readonly Filter[], limit: number): ReadonlyArray<{ seq: number; subject: string; lease: Standing | null }>;
  /**
   * The lease as it stands now (its resident actor, else its row); undefined when never claimed.
   * `stored`, when given, is its stored row as just read (null: none), used instead of reading it again.
   */
  standing(mkey: number, subject: string, stored?: Standing | null): Standing | undefined;
  firstMatch(mkey: number, subject: string, from: number, to: number, filters: readonly Filter[]): number | undefined;
}

export interface Entry {
  readonly subject: string;
  /** Where the subject first matched: its place in line. */
  readonly seq: number;
  where: 'ready' | 'held' | 'done';
  inHeap: boolean;
  /** While held: when the lease lapses (a lapsed lease may be taken, its expiry recorded first). */
  expiresMs: number | null;
  /**
   * Found with no lease row, and no change of its lease heard of since: a grant need not read the row
   * back (every write of a lease row of this monitor reaches `changed`, and a reload `reloaded`).
   */
  unleased?: boolean;
}

/** How take-next sees a lease now. */
export type Availability = 'available' | 'held' | 'completed' | 'dead';

export function availability(standing: Pick<Standing, 'state' | 'expiresMs'> | undefined, now: number): Availability {
  if (!standing || standing.state === 'free') return 'available';
  if (standing.state === 'held') return standing.expiresMs !== null && now >= standing.expiresMs ? 'available' : 'held';
  return standing.state === 'completed' ? 'completed' : 'dead';
}

export class TakeQueue {
  /** Every matching observation with seq ≤ frontier has been looked at. */
  private frontier = 0;
  private readonly entries = new Map<string, Entry>();
  private readonly heap: Entry[] = [];
  /** Held entries by when their lease lapses: back in the heap then, even if no expiry was heard of (another node's timer). */
  private readonly lapses: Array<{ at: number; entry: Entry }> = [];
  private ready = 0;
  /** Subjects freed that this line has no entry for, placed on the next take. */
  private readonly orphans = new Set<string>();
  private lossy = false;
  /** When the line was last used (for dropping idle lines). */
  usedAt = 0;

  constructor(
    readonly feed: Feed,
    readonly filters: readonly Filter[],
    private readonly host: QueueHost,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /**
   * Moves the frontier until `need` subjects are ready, the committed head is reached, or `budget`
   * rows were read. Returns false only when the budget ran out first (call again: more may be ready).
   */
  warm(need: number, now: number, budget = Number.POSITIVE_INFINITY): boolean {
    if (this.orphans.size > 0) this.placeOrphans(now);
    let read = 0;
    while (this.ready < need) {
      const head = this.feed.committedHead;
      if (this.frontier >= head) return true;
      if (read >= budget) return false;
      // Ready entries are never dropped; the frontier waits while the heap holds half the bound.
      if (this.ready >= maxEntries / 2) return true;
      const rows = this.host.subjectsAfter(this.feed.key, this.frontier, head, this.filters, scanChunk);
      read += rows.length;
      for (const row of rows) {
        this.frontier = row.seq;
        if (!this.entries.has(row.subject)) this.discover(row.subject, row.seq, now, row.lease);
        if (this.ready >= maxEntries / 2) break;
      }
      if (rows.length < scanChunk && this.ready < maxEntries / 2) this.frontier = head;
    }
    return true;
  }

  /** The oldest subject in line that is not known to be taken, out of the heap (its entry counts as held until told otherwise). */
  pop(now: number): Entry | undefined {
    if (this.orphans.size > 0) this.placeOrphans(now);
    this.releaseLapsed(now);
    for (;;) {
      if (this.ready === 0) this.warm(1, now);
      const entry = this.heap.length > 0 ? this.popHeap() : undefined;
      if (!entry) return undefined;
      if (entry.where !== 'ready' || this.entries.get(entry.subject) !== entry) continue;
      this.ready--;
      entry.where = 'held';
      return entry;
    }
  }

  /**
   * Where `entry` stands now: back in the heap, held, or out of line. A completion that take-next
   * granted from this place leaves the line (the lease keeps the place in `queued`); one completed
   * otherwise stays known as done, so that a named claim's release puts it back.
   */
  place(entry: Entry, found: Availability, queued: number | null, expiresMs: number | null = null): void {
    if (this.entries.get(entry.subject) !== entry) return;
    if (found === 'available') this.toReady(entry);
    else if (found === 'held') this.hold(entry, expiresMs);
    else if (found === 'completed' && queued !== entry.seq) this.setWhere(entry, 'done');
    else this.forget(entry);
  }

  /** A lease of this monitor changed (a grant, completion, release, rejection, expiry, or another node's write). */
  changed(subject: string, standing: Standing, now: number): void {
    const entry = this.entries.get(subject);
    const found = availability(standing, now);
    if (entry) {
      entry.unleased = false;
      this.place(entry, found, standing.queued, standing.expiresMs);
      return;
    }
    // Freed and unknown here: it had a place only if it was found at `queued`, or if this line dropped it.
    if (found === 'available' && (standing.queued !== null || this.lossy)) this.orphans.add(subject);
  }

  /** Memory of the monitor was replaced from the database: whatever this line believed held is looked at again. */
  reloaded(): void {
    for (const entry of this.entries.values()) {
      entry.unleased = false;
      if (entry.where === 'held') this.toReady(entry);
    }
  }

  private discover(subject: string, seq: number, now: number, stored: Standing | null): void {
    const standing = this.host.standing(this.feed.key, subject, stored);
    const found = availability(standing, now);
    // A subject take-next found earlier (its entry since gone) keeps that place, if it matched here.
    const queued = standing?.queued ?? null;
    const place = queued !== null && queued < seq && this.matchesAt(subject, queued) ? queued : seq;
    // Completed after take-next granted it from its place: the lease remembers the place.
    if (found === 'dead' || (found === 'completed' && queued === place)) return;
    const entry: Entry = { subject, seq: place, where: 'held', inHeap: false, expiresMs: null, unleased: standing === undefined };
    this.entries.set(subject, entry);
    if (found === 'available') this.toReady(entry);
    else if (found === 'completed') entry.where = 'done';
    else this.hold(entry, standing?.expiresMs ?? null);
    if (this.entries.size > maxEntries) this.shed();
  }

  /** Whether the observation at `seq` (one of `subject`'s) matches this line's filters. */
  private matchesAt(subject: string, seq: number): boolean {
    return this.filters.length === 0 || this.host.firstMatch(this.feed.key, subject, seq, seq, this.filters) !== undefined;
  }

  /** A freed subject without an entry: its place is `queued` if that observation matches here. */
  private placeOrphans(now: number): void {
    const floor = Math.max(1, this.feed.stats.retention_floor);
    for (const subject of this.orphans) {
      if (this.entries.has(subject)) continue;
      const standing = this.host.standing(this.feed.key, subject);
      if (availability(standing, now) !== 'available') continue;
      const queued = standing?.queued ?? null;
      let seq: number | undefined;
      if (queued !== null && queued <= this.frontier && this.matchesAt(subject, queued)) seq = queued;
      if (seq === undefined && this.lossy) seq = this.host.firstMatch(this.feed.key, subject, floor, this.frontier, this.filters);
      if (seq === undefined) continue;
      const entry: Entry = { subject, seq, where: 'held', inHeap: false, expiresMs: null };
      this.entries.set(subject, entry);
      this.toReady(entry);
    }
    this.orphans.clear();
  }

  /** Past the bound: completed, then held entries go; a freed subject no longer known is looked up in the log. */
  private shed(): void {
    for (const where of ['done', 'held'] as const) {
      for (const entry of this.entries.values()) {
        if (this.entries.size <= maxEntries * 0.75) return;
        if (entry.where === where) {
          this.entries.delete(entry.subject);
          this.lossy = true;
        }
      }
    }
  }

  /** Held until `expiresMs` (when known): the entry comes back to the heap then unless told otherwise. */
  private hold(entry: Entry, expiresMs: number | null): void {
    this.setWhere(entry, 'held');
    entry.expiresMs = expiresMs;
    if (expiresMs === null) return;
    const lapses = this.lapses;
    const item = { at: expiresMs, entry };
    let i = lapses.push(item) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (lapses[parent]!.at <= expiresMs) break;
      lapses[i] = lapses[parent]!;
      i = parent;
    }
    lapses[i] = item;
  }

  /** Held entries whose lease lapsed by now go back in the heap (the grant records the expiry first). */
  private releaseLapsed(now: number): void {
    const lapses = this.lapses;
    while (lapses.length > 0 && lapses[0]!.at <= now) {
      const { at, entry } = lapses[0]!;
      const last = lapses.pop()!;
      if (lapses.length > 0) {
        let i = 0;
        for (;;) {
          const left = 2 * i + 1;
          if (left >= lapses.length) break;
          const right = left + 1;
          const child = right < lapses.length && lapses[right]!.at < lapses[left]!.at ? right : left;
          if (lapses[child]!.at >= last.at) break;
          lapses[i] = lapses[child]!;
          i = child;
        }
        lapses[i] = last;
      }
      if (this.entries.get(entry.subject) === entry && entry.where === 'held' && entry.expiresMs === at) this.toReady(entry);
    }
  }

  private forget(entry: Entry): void {
    if (entry.where === 'ready') this.ready--;
    this.entries.delete(entry.subject);
  }

  private setWhere(entry: Entry, where: 'held' | 'done'): void {
    if (entry.where === 'ready') this.ready--;
    entry.where = where;
  }

  private toReady(entry: Entry): void {
    if (entry.where !== 'ready') this.ready++;
    entry.where = 'ready';
    if (!entry.inHeap) this.pushHeap(entry);
  }

  // A binary min-heap on seq. Entries that left `ready` stay in it until popped, then are skipped.
  private pushHeap(entry: Entry): void {
    entry.inHeap = true;
    const heap = this.heap;
    let i = heap.push(entry) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.seq <= entry.seq) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = entry;
  }

  private popHeap(): Entry {
    const heap = this.heap;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= heap.length) break;
        const right = left + 1;
        const child = right < heap.length && heap[right]!.seq < heap[left]!.seq ? right : left;
        if (heap[child]!.seq >= last.seq) break;
        heap[i] = heap[child]!;
        i = child;
      }
      heap[i] = last;
    }
    top.inHeap = false;
    return top;
  }
}
