// The monitor server's storage: SQLite in WAL mode, queries compiled by
// kysely, writes applied by group commit. Reads are synchronous and see only
// committed data; writes are queued and land together at the end of the turn.
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { expandPath } from '../paths/expand-path.ts';
import type { Filter } from '../protocol/filter.ts';
import { whereFilters } from './filter-sql.ts';
import { GroupCommit } from './group-commit.ts';
import { StatementCache, qb } from './query-builder.ts';
import type {
  FeedStats,
  LeaseRow,
  MonitorDefinition,
  MonitorRow,
  MonitorStatus,
  ObservationRow,
  SubscriptionRow,
} from './records.ts';
import { leaseRecordOf, leaseRecordText } from './lease-record-text.ts';
import { applySchema } from './schema.ts';
import { QueueReads } from './queue-reads.ts';
import { type Statements, observationColumns, prepareStatements } from './statements.ts';
import { type SqlDriver, openSqlDriver } from './sql-driver.ts';
import { type StateLock, StateLockedError, lockStateFile } from './state-lock.ts';
import { WalCheckpointer } from './wal-checkpointer.ts';

export const memoryPath = ':memory:';

export interface StoreOptions {
  /** A file path (a leading "~" is the home directory) or ":memory:". */
  readonly path: string;
  readonly driver?: 'auto' | 'better-sqlite3' | 'node:sqlite';
  /** Replaces the group commit (a cluster commits each batch to PostgreSQL first: src/cluster). */
  readonly commits?: (driver: SqlDriver, store: Store) => CommitQueue;
  /**
   * `path` is a private file rebuilt at every start (a cluster node's replica): no lock, no fsync,
   * no WAL, and at most `cacheKiB` of its pages held in memory.
   */
  readonly scratch?: { readonly cacheKiB: number };
  /** Size at which the write-ahead log is restarted under steady writes (wal-checkpointer.ts; default 64 MB). */
  readonly walRestartBytes?: number;
}

/** What the service needs from a group commit. */
export type CommitQueue = Pick<GroupCommit, 'append' | 'put' | 'settled' | 'hasPending' | 'failed' | 'on' | 'off' | 'flush'>;

export type CapturedKind = 'monitor' | 'observation' | 'subject' | 'contradiction' | 'subscription' | 'lease' | 'compact' | 'confirm' | 'fence';
/**
 * Sees every row a commit writes, with the statement's parameters (a cluster writes the same rows to
 * PostgreSQL). Called before the statement runs, so that a statement that fails is known by its monitor.
 */
export type RowCapture = (kind: CapturedKind, mkey: number, params: readonly unknown[]) => void;

export function resolveStatePath(path: string): string {
  if (path === memoryPath) return path;
  return resolve(expandPath(path, process.cwd()));
}

export class Store {
  readonly path: string;
  readonly commits: CommitQueue;
  /** Set by a cluster's commit queue while it runs a batch. */
  capture: RowCapture | undefined;
  /** The connection, for modules that keep their own tables in this database (src/cloud). */
  readonly driver: SqlDriver;
  /** The reads of take-next (protocol.md §21): committed data, as every read here. */
  readonly queue: QueueReads;
  private readonly lock: StateLock | undefined;
  private readonly checkpointer: WalCheckpointer | undefined;
  private readonly dynamic: StatementCache;
  private readonly q: Statements;
  private readonly definitionTexts = new WeakMap<MonitorDefinition, string>();

  static open(options: StoreOptions): Store {
    return new Store(options);
  }

  private constructor(options: StoreOptions) {
    this.path = resolveStatePath(options.path);
    try {
      if (this.path !== memoryPath && !options.scratch) {
        // The file holds every observation and the token hashes: only its owner may read it.
        mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
        this.lock = lockStateFile(this.path);
        closeSync(openSync(this.path, 'a', 0o600));
      }
      this.driver = openSqlDriver(this.path, options.driver);
      if (options.scratch) {
        // A crash leaves a file no one opens again: rollbacks need a journal, durability does not.
        // Pages are read with read(), not mapped, so the cache bound is the memory bound.
        // Set before the first table: pages freed by a drop can then be returned to the file system
        // (ReplicaWriter.shrink), so the file follows the replica budget down, not only up.
        this.driver.exec('PRAGMA auto_vacuum = INCREMENTAL');
        this.driver.exec('PRAGMA locking_mode = EXCLUSIVE');
        this.driver.exec('PRAGMA journal_mode = MEMORY');
        this.driver.exec('PRAGMA synchronous = OFF');
        this.driver.exec('PRAGMA mmap_size = 0');
        this.driver.exec(`PRAGMA cache_size = -${Math.max(1024, Math.floor(options.scratch.cacheKiB))}`);
      } else {
        // WAL with synchronous=NORMAL: a commit survives a killed process without an fsync per commit.
        this.driver.exec('PRAGMA journal_mode = WAL');
        this.driver.exec('PRAGMA synchronous = NORMAL');
      }
      this.driver.exec('PRAGMA busy_timeout = 5000');
      this.driver.exec('PRAGMA foreign_keys = OFF');
      applySchema(this.driver);
    } catch (error) {
      this.lock?.release();
      // SQLite's messages ("file is not a database", "attempt to write a readonly database") do not say which file.
      if (this.path === memoryPath || error instanceof StateLockedError) throw error;
      throw new Error(`cannot open the state file ${this.path}: ${(error as Error).message}`, { cause: error });
    }
    this.commits = options.commits ? options.commits(this.driver, this) : new GroupCommit(this.driver);
    const commits = this.commits;
    const hold = commits instanceof GroupCommit ? (released: Promise<unknown>) => commits.holdUntil(released) : undefined;
    this.checkpointer = this.path === memoryPath || options.scratch ? undefined : WalCheckpointer.for(this.path, this.driver, { holdCommits: hold, restartBytes: options.walRestartBytes });
    const checkpointer = this.checkpointer;
    if (checkpointer) this.commits.on('committed', () => checkpointer.committed());
    this.dynamic = new StatementCache(this.driver);
    this.q = prepareStatements(this.driver);
    this.queue = new QueueReads(this.driver);
  }

  // ---- reads (committed data only) ----

  monitors(): MonitorRow[] {
    return this.q.monitors
      .all<{ key: number; status: string; definition: string; owner_token_hash: string; subscribe_token_hash: string | null; stats: string }>()
      .map((r) => ({
        key: r.key,
        status: r.status as MonitorStatus,
        definition: JSON.parse(r.definition) as MonitorDefinition,
        ownerTokenHash: r.owner_token_hash,
        subscribeTokenHash: r.subscribe_token_hash,
        stats: JSON.parse(r.stats) as FeedStats,
      }));
  }

  contradictions(): Array<{ mkey: number; seq: number; subject: string | null }> {
    return this.q.contradictions.all();
  }

  subscription(id: string): SubscriptionRow | undefined {
    return toSubscriptionRow(this.q.subscription.get([id]));
  }

  subscribers(): Array<{ id: string; mkey: number; subscriber: string }> {
    return this.q.subscribers.all();
  }

  liveSubscriptionCounts(): Map<number, number> {
    return new Map(this.q.liveCounts.all<{ mkey: number; live: number }>().map((r) => [r.mkey, Number(r.live)]));
  }

  muteDeadlines(): Array<{ id: string; deadlineMs: number }> {
    return this.q.muteDeadlines
      .all<{ id: string; mute_deadline_ms: number }>()
      .map((r) => ({ id: r.id, deadlineMs: r.mute_deadline_ms }));
  }

  lease(mkey: number, subject: string): LeaseRow | undefined {
    const row = this.q.lease.get<{ state: string; record: string; monitor: string | null }>([mkey, subject]);
    return row ? { state: row.state as LeaseRow['state'], record: leaseRecordOf(row.record, mkey, subject, row.monitor ?? '') } : undefined;
  }

  leaseDeadlines(): Array<{ mkey: number; subject: string; deadlineMs: number }> {
    return this.q.leaseDeadlines
      .all<{ mkey: number; subject: string; expires_ms: number }>()
      .map((r) => ({ mkey: r.mkey, subject: r.subject, deadlineMs: r.expires_ms }));
  }

  subjectSeen(mkey: number, subject: string): boolean {
    return this.q.subjectSeen.get([mkey, subject]) !== undefined;
  }

  /**
   * Up to `limit` matching observations with from ≤ seq ≤ upTo, in order. Readers pass the feed's committed
   * head: a cluster node's replica also holds the rows of a batch PostgreSQL has not committed yet.
   */
  readFeed(mkey: number, from: number, limit: number, filters: readonly Filter[], upTo: number): Array<{ seq: number; body: string }> {
    if (upTo < from) return [];
    let query = qb.selectFrom('observations').select(['seq', 'body']).where('mkey', '=', mkey).where('seq', '>=', from).where('seq', '<=', upTo);
    if (filters.length > 0) query = query.where((eb) => whereFilters(eb, filters));
    return this.dynamic.all(query.orderBy('seq').limit(limit).compile());
  }

  /** The number of matching observations with from ≤ seq ≤ to. */
  countFeed(mkey: number, from: number, to: number, filters: readonly Filter[]): number {
    if (to < from) return 0;
    const query = qb
      .selectFrom('observations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('mkey', '=', mkey)
      .where('seq', '>=', from)
      .where('seq', '<=', to)
      .where((eb) => whereFilters(eb, filters));
    return Number(this.dynamic.get<{ n: number }>(query.compile())?.n ?? 0);
  }

  // ---- queued writes (applied by the next group commit) ----

  putMonitor(read: () => MonitorRow): void {
    const key = read().key;
    this.commits.put(`m:${key}`, () => {
      const row = read();
      const params = [
        row.key,
        row.definition.id,
        row.status,
        this.definitionText(row.definition),
        row.ownerTokenHash,
        row.subscribeTokenHash,
        JSON.stringify(row.stats),
      ];
      this.capture?.('monitor', row.key, params);
      this.q.upsertMonitor.run(params);
    });
  }

  /**
   * The definition as stored, serialised once per version: the monitor's row is written with every
   * commit that moves its counters, its definition seldom changes, and a change is a new object
   * (the monitor actor's context), never an edit of the old one.
   */
  private definitionText(definition: MonitorDefinition): string {
    let text = this.definitionTexts.get(definition);
    if (text === undefined) {
      text = JSON.stringify(definition);
      this.definitionTexts.set(definition, text);
    }
    return text;
  }

  appendObservation(row: ObservationRow): void {
    this.commits.append(() => {
      const params = observationColumns.map((c) => row[c]);
      this.capture?.('observation', row.mkey, params);
      this.q.insertObservation.run(params);
    });
  }

  addSubject(mkey: number, subject: string): void {
    this.commits.append(() => {
      this.capture?.('subject', mkey, [mkey, subject]);
      this.q.addSubject.run([mkey, subject]);
    });
  }

  addContradiction(mkey: number, seq: number, subject: string | null): void {
    this.commits.append(() => {
      this.capture?.('contradiction', mkey, []);
      this.q.addContradiction.run([mkey, seq, subject]);
    });
  }

  /** Closes the contradictions on `subject` recorded before `beforeSeq`. */
  resolveContradictionsOf(mkey: number, subject: string, beforeSeq: number): void {
    this.commits.append(() => {
      this.capture?.('contradiction', mkey, []);
      this.q.resolveContradictionsOf.run([mkey, subject, beforeSeq]);
    });
  }

  resolveContradiction(mkey: number, seq: number): void {
    this.commits.append(() => {
      this.capture?.('contradiction', mkey, []);
      this.q.resolveContradiction.run([mkey, seq]);
    });
  }

  /**
   * A decision read from memory that writes nothing (an idempotent lease re-claim): a cluster node's
   * batch has PostgreSQL confirm, in its transaction, that the monitor has not moved since memory
   * read it. Nothing for a single server, whose memory is the authority.
   */
  confirm(mkey: number): void {
    this.commits.append(() => this.capture?.('confirm', mkey, []));
  }

  /**
   * The writes queued with this one are made because this cluster node owns the monitor's timers
   * under `token` (src/cluster/ownership.ts): PostgreSQL refuses the batch once the token is not current.
   */
  fence(mkey: number, token: number): void {
    this.commits.append(() => this.capture?.('fence', mkey, [token]));
  }

  // Rows are read only when the batch commits: a timer that fires while an
  // actor is being restored may ask to persist it before it is resident.
  putSubscription(id: string, read: () => SubscriptionRow): void {
    this.commits.put(`s:${id}`, () => {
      const { state, record } = read();
      const params = [
        record.id,
        record.mkey,
        record.subscriber,
        state,
        record.tokenHash,
        record.cursor,
        state === 'live' ? record.lastActivityMs + record.muteMs : null,
        JSON.stringify(record),
      ];
      this.capture?.('subscription', record.mkey, params);
      this.q.upsertSubscription.run(params);
    });
  }

  putLease(mkey: number, subject: string, read: () => LeaseRow): void {
    this.commits.put(`l:${mkey}:${subject}`, () => {
      const { state, record } = read();
      const params = [mkey, subject, state, state === 'held' ? record.expiresMs : null, leaseRecordText(record)];
      this.capture?.('lease', mkey, params);
      this.q.upsertLease.run(params);
    });
  }

  compact(mkey: number, uptoSeq: number): void {
    this.commits.append(() => {
      this.capture?.('compact', mkey, [mkey, uptoSeq]);
      this.q.compact.run([mkey, uptoSeq]);
    });
  }

  settled(): Promise<void> {
    return this.commits.settled();
  }

  close(): void {
    try {
      this.commits.flush();
      this.checkpointer?.close();
      this.driver.close();
    } finally {
      this.lock?.release();
    }
  }
}

function toSubscriptionRow(row: { state: string; record: string } | undefined): SubscriptionRow | undefined {
  return row ? { state: row.state as SubscriptionRow['state'], record: JSON.parse(row.record) } : undefined;
}
