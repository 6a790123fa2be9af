// The triggers' durable state: which temporal recipes are enabled, when each
// last and next fires, its failures and circuit, every firing, the sentinels'
// subscriptions and their reactions. Queries are compiled by kysely and run
// synchronously on better-sqlite3 (WAL), so the daemon and the CLI can both
// use the file at once.
import { mkdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, type CompiledQuery } from 'kysely';
import { openSqlDriver, type SqlDriver } from '../store/sql-driver.ts';
import {
  type FiringTable,
  type ReactionTable,
  type SentinelSubscriptionTable,
  type TemporalStateTable,
  type TriggerDatabase,
  addedColumns,
  triggerSchemaSql,
} from './trigger-tables.ts';
import { SubscriptionTokens } from './sentinel/subscription-tokens.ts';

const qb = new Kysely<TriggerDatabase>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
});

export type TemporalState = TemporalStateTable;
export type Firing = FiringTable;

export function triggerDbPath(projectRoot: string): string {
  return join(projectRoot, '.vigil', 'vigil.db');
}

export class TriggerStore {
  private constructor(
    private readonly db: SqlDriver,
    private readonly tokens: SubscriptionTokens,
  ) {}

  static open(projectRoot: string): TriggerStore {
    mkdirSync(join(projectRoot, '.vigil'), { recursive: true });
    const db = openSqlDriver(triggerDbPath(projectRoot), 'better-sqlite3');
    db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;');
    db.exec(triggerSchemaSql);
    for (const { table, column, definition } of addedColumns) {
      const columns = db.prepare(`PRAGMA table_info(${table})`).all<{ name: string }>([]);
      if (!columns.some((c) => c.name === column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${definition}`);
    }
    const store = new TriggerStore(db, new SubscriptionTokens(projectRoot));
    store.moveTokensOut();
    return store;
  }

  /** Tokens an older Vigil kept in vigil.db go to the Vigil home, and their bytes out of the file. */
  private moveTokensOut(): void {
    const kept = this.db.prepare(`SELECT subscription, token FROM sentinel_subscriptions WHERE token != ''`).all<{ subscription: string; token: string }>([]);
    if (kept.length === 0) return;
    this.tokens.save(Object.fromEntries(kept.map((r) => [r.subscription, r.token])), this.subscriptionIds());
    this.db.exec(`PRAGMA secure_delete = ON; UPDATE sentinel_subscriptions SET token = ''; PRAGMA wal_checkpoint(TRUNCATE); PRAGMA secure_delete = OFF;`);
  }

  private subscriptionIds(): Set<string> {
    return new Set(this.db.prepare('SELECT subscription FROM sentinel_subscriptions').all<{ subscription: string }>([]).map((r) => r.subscription));
  }

  private run(query: CompiledQuery): number {
    return Number(this.db.prepare(query.sql).run(query.parameters).changes);
  }
  private all<T>(query: CompiledQuery): T[] {
    return this.db.prepare(query.sql).all<T>(query.parameters);
  }
  private get<T>(query: CompiledQuery): T | undefined {
    return this.db.prepare(query.sql).get<T>(query.parameters);
  }

  close(): void {
    this.db.close();
  }

  /** The id of this project's sentinel instance on this machine: made once, then kept. */
  instanceId(): string {
    const row = this.get<{ value: string }>(qb.selectFrom('meta').select('value').where('key', '=', 'instance').compile());
    if (row) return row.value;
    const id = randomBytes(4).toString('hex');
    this.run(qb.insertInto('meta').values({ key: 'instance', value: id }).onConflict((c) => c.doNothing()).compile());
    return this.instanceId();
  }

  temporal(name: string): TemporalState | undefined {
    return this.get<TemporalState>(qb.selectFrom('temporal_state').selectAll().where('name', '=', name).compile());
  }

  allTemporal(): TemporalState[] {
    return this.all<TemporalState>(qb.selectFrom('temporal_state').selectAll().compile());
  }

  /** Creates the row when missing, then applies `patch`. */
  patchTemporal(name: string, patch: Partial<Omit<TemporalState, 'name'>>): TemporalState {
    this.run(qb.insertInto('temporal_state').values({ name, consecutive_failures: 0, circuit_broken: 0 }).onConflict((c) => c.doNothing()).compile());
    if (Object.keys(patch).length > 0) this.run(qb.updateTable('temporal_state').set(patch).where('name', '=', name).compile());
    return this.temporal(name)!;
  }

  addFiring(firing: Firing): void {
    this.run(qb.insertInto('firings').values(firing).compile());
  }

  endFiring(runId: string, status: string, endedMs: number, reason: string | null): void {
    this.run(qb.updateTable('firings').set({ status, ended_ms: endedMs, reason }).where('run_id', '=', runId).compile());
  }

  setFiringPid(runId: string, pid: number | null): void {
    this.run(qb.updateTable('firings').set({ pid }).where('run_id', '=', runId).compile());
  }

  firings(recipe?: string): Firing[] {
    let q = qb.selectFrom('firings').selectAll().orderBy('started_ms', 'asc');
    if (recipe) q = q.where('recipe', '=', recipe);
    return this.all<Firing>(q.compile());
  }

  runningFirings(): Firing[] {
    return this.all<Firing>(qb.selectFrom('firings').selectAll().where('status', '=', 'running').compile());
  }

  /** The subscription a sentinel made, with its token; none when the token is no longer kept (subscribe anew). */
  subscription(recipe: string, kind: string): SentinelSubscriptionTable | undefined {
    const row = this.get<SentinelSubscriptionTable>(qb.selectFrom('sentinel_subscriptions').selectAll().where('recipe', '=', recipe).where('kind', '=', kind).compile());
    const token = row && this.tokens.get(row.subscription);
    return row && token ? { ...row, token } : undefined;
  }

  saveSubscription(row: SentinelSubscriptionTable): void {
    const stored = { ...row, token: '' };
    this.run(
      qb
        .insertInto('sentinel_subscriptions')
        .values(stored)
        .onConflict((c) => c.columns(['recipe', 'kind']).doUpdateSet({ base: row.base, monitor: row.monitor, subscription: row.subscription, token: '' }))
        .compile(),
    );
    this.tokens.save({ [row.subscription]: row.token }, this.subscriptionIds());
  }

  /**
   * The reaction of `recipe` to observation `seq` as it came through `subscription`. A row from before
   * subscriptions were kept names no subscription and is not taken for one: a seq it names may be
   * another observation's now, and a reaction missed for good is worse than one run twice after a
   * crash that came just before the upgrade.
   */
  reaction(recipe: string, subscription: string, seq: number): ReactionTable | undefined {
    return this.get(qb.selectFrom('reactions').selectAll().where('recipe', '=', recipe).where('seq', '=', seq).where('subscription', '=', subscription).compile());
  }

  saveReaction(row: ReactionTable): void {
    this.run(
      qb
        .insertInto('reactions')
        .values(row)
        .onConflict((c) => c.columns(['recipe', 'seq']).doUpdateSet({ run_id: row.run_id, status: row.status, subject: row.subject, subscription: row.subscription }))
        .compile(),
    );
  }
}
