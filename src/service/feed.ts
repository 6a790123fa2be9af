// A monitor's feed as the server holds it in memory: the lifecycle actor,
// token hashes, and the running counters the state document is read from.
import type { MonitorActor } from '../actors/root-system.ts';
import { monitorStatusOf } from '../machines/monitor-machine.ts';
import { parseFilter, type Filter } from '../protocol/filter.ts';
import { protocolTypes } from '../protocol/vocabulary.ts';
import type { FeedStats, MonitorDefinition, MonitorRow, MonitorStatus } from '../store/records.ts';
import { SharedTail } from './shared-tail.ts';

/** Called after a commit that added observations; returns true when the waiter is done. */
export type Waiter = () => boolean;

const maxKnownTypes = 1000;
const maxRememberedSubjects = 4096;

export function emptyStats(): FeedStats {
  return {
    head: 0,
    retention_floor: 0,
    observations: 0,
    rejected: 0,
    delivered: 0,
    acted: 0,
    last: null,
    last_source_contact: null,
    covers_until: null,
    last_pull: null,
    known_types: [],
    first_actor: null,
    several_actors: false,
    last_has_event_provenance: null,
  };
}

export interface FeedFollower {
  committed(): void;
  /** A cluster node reloaded the monitor's subscriptions from the database: check yours again. */
  subscriptionsReloaded(): void;
}

export class Feed {
  /** Highest seq whose row is committed; pulls never look past it. */
  committedHead: number;
  liveSubscriptions = 0;
  /** Open contradictions: seq → subject. */
  readonly openContradictions = new Map<number, string | null>();
  readonly waiters = new Set<Waiter>();
  /** Open event streams of this monitor, told after each commit that stored observations here. */
  readonly followers = new Set<FeedFollower>();
  /** The rows after the last commit, read once for all caught-up unfiltered streams. */
  readonly tail = new SharedTail();
  private readonly storedSubjects = new Set<string>();
  private filterCache: { source: Record<string, unknown>; parsed: Filter } | undefined;

  constructor(
    readonly key: number,
    /** Replaced when a cluster node reloads the monitor from the database. */
    public actor: MonitorActor,
    public ownerTokenHash: string,
    public subscribeTokenHash: string | null,
    readonly stats: FeedStats,
  ) {
    this.committedHead = stats.head;
  }

  get id(): string {
    return this.definition.id;
  }

  get definition(): MonitorDefinition {
    return this.actor.getSnapshot().context.definition;
  }

  get status(): MonitorStatus {
    return monitorStatusOf(this.actor.getSnapshot().value);
  }

  knownTypes(): string[] {
    return [...new Set([...protocolTypes, ...this.definition.types, ...this.stats.known_types])];
  }

  noteType(type: string): void {
    if (this.stats.known_types.length < maxKnownTypes && !this.stats.known_types.includes(type)) {
      this.stats.known_types.push(type);
    }
  }

  /**
   * True the first time a subject is seen by this process: only then must its row be
   * written. Remembers a bounded number of subjects (rows are never removed, so a
   * forgotten one only costs an insert that does nothing).
   */
  firstSightOf(subject: string): boolean {
    if (this.storedSubjects.has(subject)) return false;
    if (this.storedSubjects.size < maxRememberedSubjects) this.storedSubjects.add(subject);
    return true;
  }

  /**
   * The subjects remembered may include one whose row was in a batch the database refused: after a
   * reload each is written again on its next sight (an insert that does nothing when the row exists).
   */
  forgetStoredSubjects(): void {
    this.storedSubjects.clear();
  }

  noteActor(actor: string): void {
    if (this.stats.first_actor === null) this.stats.first_actor = actor;
    else if (this.stats.first_actor !== actor) this.stats.several_actors = true;
  }

  /** The monitor's own filter, parsed once per definition version. */
  ownFilter(): Filter {
    const source = this.definition.filter;
    if (this.filterCache?.source !== source) {
      this.filterCache = { source, parsed: parseFilter(source, { knownTypes: () => this.knownTypes() }) };
    }
    return this.filterCache.parsed;
  }

  row(): MonitorRow {
    return {
      key: this.key,
      status: this.status,
      definition: this.definition,
      ownerTokenHash: this.ownerTokenHash,
      subscribeTokenHash: this.subscribeTokenHash,
      stats: this.stats,
    };
  }

  /** Wakes waiting pulls and streams after a commit. */
  notify(): void {
    for (const waiter of [...this.waiters]) {
      if (waiter()) this.waiters.delete(waiter);
    }
  }
}
