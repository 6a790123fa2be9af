// Which node runs a monitor's timers: the one holding the monitor's advisory
// lock on its own PostgreSQL session. Every second each node tries to take
// the locks nobody holds among the monitors assigned to it: rendezvous hashing
// of the monitor over the live nodes (heartbeat.ts), so the monitors spread
// over the nodes instead of all going to the first one up, and a node gives
// back the locks of monitors assigned to another live node. A node that dies
// loses its session and with it its locks, and drops out of the live list, so
// the others take its monitors within a few seconds.
import type pg from 'pg';
import type { PgConnection } from '../store/postgres/pg-connection.ts';

/** The advisory lock namespace of monitor timers (first key of the two-key form). */
const lockClass = 0x7669;
const intervalMs = 1000;
/** The lock session's application_name, followed by the node id: which nodes' sessions are open. */
const sessionPrefix = 'vigil-lock:';
const answerWithinMs = 5000;

export interface OwnershipHooks {
  /** The lock of this monitor was just taken: catch up on it and arm its timers. */
  acquired(mkey: number): Promise<void>;
  /** Every lock was lost (the session ended). */
  released(): void;
  /** This node's id ('' until it has one): its lock session is named after it. */
  nodeId(): string;
  /**
   * This node should hold the monitor's lock: it is assigned to it among the live nodes whose lock
   * session is open (`holders`; a killed node's session ends at once, its heartbeat only after seconds).
   */
  assigned(mkey: number, holders: ReadonlySet<string>): boolean;
  /** The lock of this monitor was handed back to the node it is assigned to. */
  handedBack(mkey: number): void;
  log(line: string): void;
}

export class Ownership {
  private readonly owned = new Set<number>();
  private session: pg.Client | undefined;
  private sessionName = '';
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private running: Promise<void> | undefined;

  private constructor(
    private readonly connection: PgConnection,
    private readonly hooks: OwnershipHooks,
  ) {}

  static async start(connection: PgConnection, hooks: OwnershipHooks): Promise<Ownership> {
    const ownership = new Ownership(connection, hooks);
    await ownership.tick();
    ownership.timer = setInterval(() => void ownership.tick(), intervalMs);
    ownership.timer.unref();
    return ownership;
  }

  owns(mkey: number): boolean {
    return this.owned.has(mkey);
  }

  /** How many monitors' timers run here. */
  get ownedCount(): number {
    return this.owned.size;
  }

  /** Tries to take free monitors now. */
  poke(): void {
    void this.tick();
  }

  private tick(): Promise<void> {
    this.running ??= this.takeFree().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async takeFree(): Promise<void> {
    if (this.closed) return;
    try {
      if (!this.session) {
        const session = await this.connection.session();
        const lost = () => {
          if (this.session !== session) return;
          // The locks went with the session: another node may hold them now.
          this.session = undefined;
          this.lost();
        };
        session.on('error', lost);
        session.on('end', lost);
        // A node whose machine dies sends no FIN: PostgreSQL ends its session (and frees its locks)
        // after about 4 s of unanswered keepalives instead of the system's default of hours.
        await session.query('set tcp_keepalives_idle = 2; set tcp_keepalives_interval = 1; set tcp_keepalives_count = 2');
        this.session = session;
        this.sessionName = '';
      }
      const session = this.session;
      // Asked every second: a session that stops answering is given up within seconds.
      const ask = <R extends pg.QueryResultRow>(text: string, values: unknown[]) =>
        session.query<R>({ text, values, query_timeout: answerWithinMs } as pg.QueryConfig);
      const id = this.hooks.nodeId();
      if (id !== this.sessionName) {
        await ask("select set_config('application_name', $1, false)", [`${sessionPrefix}${id}`]);
        this.sessionName = id;
      }
      const { rows: named } = await ask<{ id: string }>('select substr(application_name, $1) as id from pg_stat_activity where application_name like $2 and datname = current_database()', [
        sessionPrefix.length + 1,
        `${sessionPrefix}%`,
      ]);
      // Only this database's nodes: another cluster (or test) on the same PostgreSQL server is not ours.
      const holders = new Set(named.map((r) => r.id));
      for (const key of [...this.owned].filter((k) => !this.hooks.assigned(k, holders))) {
        this.owned.delete(key);
        await ask('select pg_advisory_unlock($1, $2::int)', [lockClass, key]);
        this.hooks.handedBack(key);
      }
      const { rows: free } = await ask<{ key: number }>('select key from monitors where not (key = any($1::bigint[]))', [[...this.owned]]);
      const mine = free.map((r) => r.key).filter((key) => this.hooks.assigned(key, holders));
      const { rows } = await ask<{ key: number }>('select k::bigint as key from unnest($2::bigint[]) k where pg_try_advisory_lock($1, k::int)', [lockClass, mine]);
      for (const { key } of rows) {
        this.owned.add(key);
        await this.hooks.acquired(key).catch((error) => this.hooks.log(`vigil: cannot take over monitor ${key}: ${(error as Error).message}`));
      }
    } catch (error) {
      if (this.closed) return;
      this.hooks.log(`vigil: monitor ownership check failed: ${(error as Error).message}`);
      // A session that did not answer in time may be gone: its locks are no longer ours to rely on.
      this.dropSession();
    }
  }

  /** Ends the lock session and gives up every lock it held: this node's timers and sources of those monitors stop. */
  private dropSession(): void {
    const session = this.session;
    if (!session) return;
    this.session = undefined;
    session.end().catch(() => {});
    this.lost();
  }

  private lost(): void {
    if (this.owned.size === 0) return;
    this.hooks.log(`vigil: lost the PostgreSQL lock session; this node stopped the timers and sources of ${this.owned.size} monitor(s) until it holds their locks again`);
    this.owned.clear();
    this.hooks.released();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.running?.catch(() => {});
    const session = this.session;
    this.session = undefined;
    await session?.end().catch(() => {});
  }
}
