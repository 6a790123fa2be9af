// Which node runs a monitor's timers (lease expiries, mute deadlines) and its
// live source: the holder of the monitor's row in `monitor_owners`, a lease
// on the database's clock that its owner renews every second. A row not
// renewed for `ownerLeaseMs` is free, and the node the monitor is assigned to
// takes it over with `token` one higher. Assignment is rendezvous hashing of
// the monitor over the nodes whose heartbeat is as fresh as a lease
// (heartbeat.ts), so monitors spread over the nodes, a node gives back those
// assigned to another, and a node that dies or is paused (SIGSTOP, a frozen
// VM: its sessions stay open, so nothing tied to a session would move) loses
// its monitors within `ownerLeaseMs` plus one round.
//
// The owner counts its lease on its own monotonic clock from the moment it
// sent the renewal, so it stops a monitor's timers and source before the
// database lets anyone else take it; a node waking from a pause finds its
// leases lapsed (owns() is false at once). What it had already queued is
// fenced off: every write made because a node owns the monitor carries its
// token, and PostgreSQL refuses the batch when the token is no longer the
// monitor's current, unexpired one (PgStore.checkFences).
//
// A monitor handed back because it is now assigned to another node is not
// dropped mid-write: its timers and source stop at once, but the node keeps
// (and renews) the lease until the source's queued writes are stored under
// its token, for at most `drainWithinMs`, and frees the row only then; the
// new owner's source goes on from the cursor those writes stored.
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import type { PgConnection } from '../store/postgres/pg-connection.ts';

const intervalMs = 1000;
/**
 * How long a renewal holds on the database's clock: another node may take the monitor this long after
 * the owner's last renewal. With 3 s, rounds slowed by a busy database (load 6-8) let leases lapse now
 * and then, and a lapse drops the source's queued writes; 4 s still lets another node take over within 5 s.
 */
export const ownerLeaseMs = 4000;
/** Room for the two clocks' rates: the owner gives a monitor up this much before the database frees it. */
const marginMs = 250;
/** A round's statement that takes longer is given up, and the session with it: renewals must not queue behind it. */
const answerWithinMs = 2000;
const dbNow = '(extract(epoch from clock_timestamp()) * 1000)::bigint';
/** How long a node handing a monitor back waits for its source's poll in flight and queued writes before it frees the monitor anyway. */
const drainWithinMs = 3000;
/** Of that, how long the poll in flight may take: what it saw is then queued and stored within the rest. */
const pollWithinMs = 2000;

export interface OwnershipHooks {
  /** This node just took the monitor: catch up on it, arm its timers and start its source. */
  acquired(mkey: number): Promise<void>;
  /** Every lease lapsed at once on this node's clock (a pause, or the database away): stop every source. */
  released(): void;
  /** This node's id (named before ownership starts): written into the rows it holds. */
  nodeId(): string;
  /** This node should hold the monitor: it is assigned to it among `candidates`, the nodes whose heartbeat is fresh. */
  assigned(mkey: number, candidates: ReadonlySet<string>): boolean;
  /** The monitor is no longer run here (taken over, fenced off or lapsed): stop its source at once. */
  handedBack(mkey: number): void;
  /** This node hands the monitor to the node it is now assigned to: stop its source once its poll in flight is done (within `pollWithinMs`). */
  handingBack(mkey: number, pollWithinMs: number): void;
  /** Resolves once its stopped source's poll in flight is done and the writes it queued are stored (or given up): then the monitor is freed. */
  drained(mkey: number): Promise<void>;
  log(line: string): void;
}

interface Term {
  readonly token: number;
  /** performance.now() until which the lease certainly holds. */
  validUntil: number;
}

export class Ownership {
  private readonly owned = new Map<number, Term>();
  /** Monitors being handed back: still held, for their source's queued writes; true once those are stored. */
  private readonly handing = new Map<number, boolean>();
  private session: pg.Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lapse: NodeJS.Timeout | undefined;
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

  /** This node runs the monitor's timers and source (not while handing it back). */
  owns(mkey: number): boolean {
    return !this.handing.has(mkey) && this.tokenOf(mkey) !== undefined;
  }

  /** The fencing token this node holds the monitor under, while its lease holds on this node's clock. */
  tokenOf(mkey: number): number | undefined {
    const term = this.owned.get(mkey);
    return term !== undefined && performance.now() < term.validUntil ? term.token : undefined;
  }

  /** How many monitors' timers run here. */
  get ownedCount(): number {
    return [...this.owned.keys()].filter((mkey) => this.owns(mkey)).length;
  }

  /** Tries to take free monitors now. */
  poke(): void {
    void this.tick();
  }

  /** PostgreSQL refused a write made under these monitors' tokens: another node holds them. */
  forfeit(mkeys: readonly number[]): void {
    for (const mkey of mkeys) this.lose(mkey, 'its token was fenced off');
  }

  private tick(): Promise<void> {
    this.running ??= this.round().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async round(): Promise<void> {
    if (this.closed) return;
    this.dropLapsed();
    try {
      const session = await this.open();
      const ask = <R extends pg.QueryResultRow>(text: string, values: unknown[]) =>
        session.query<R>({ text, values, query_timeout: answerWithinMs } as pg.QueryConfig);
      const id = this.hooks.nodeId();
      await this.renew(ask, id);
      const { rows: fresh } = await ask<{ id: string }>(`select id from cluster_nodes where seen_ms > ${dbNow} - $1`, [ownerLeaseMs]);
      const candidates = new Set(fresh.map((r) => r.id));
      // Assigned here again while being handed back (a heartbeat that was late came back): run it again.
      for (const mkey of [...this.handing.keys()].filter((k) => this.hooks.assigned(k, candidates))) {
        this.handing.delete(mkey);
        this.hooks.acquired(mkey).catch((error) => this.hooks.log(`vigil: cannot take monitor ${mkey} back: ${(error as Error).message}`));
      }
      const handed: number[] = [];
      for (const [mkey, term] of [...this.owned].filter(([k]) => !this.hooks.assigned(k, candidates))) {
        if (!this.handing.has(mkey)) {
          this.handBack(mkey);
          handed.push(mkey);
          continue;
        }
        if (!this.handing.get(mkey)) continue;
        this.lose(mkey);
        await ask('update monitor_owners set expires_ms = 0 where mkey = $1 and token = $2', [mkey, term.token]);
      }
      if (handed.length > 0) {
        const named = handed.slice(0, 10).join(', ') + (handed.length > 10 ? `, … (${handed.length} in all)` : '');
        this.hooks.log(`vigil: handing monitor(s) ${named} to the nodes they are assigned to now: their sources stop here once the poll in flight and the writes queued are stored (up to ${drainWithinMs / 1000} s)`);
      }
      const { rows: free } = await ask<{ key: number }>(
        `select m.key from monitors m left join monitor_owners o on o.mkey = m.key where o.mkey is null or o.expires_ms <= ${dbNow}`,
        [],
      );
      const mine = free.map((r) => r.key).filter((key) => !this.owned.has(key) && this.hooks.assigned(key, candidates));
      if (mine.length === 0) return;
      const sentAt = performance.now();
      const { rows: taken } = await ask<{ mkey: number; token: number }>(
        `insert into monitor_owners as o (mkey, node_id, token, expires_ms)
           select k, $2, 1, ${dbNow} + $3 from unnest($1::bigint[]) k
         on conflict (mkey) do update set node_id = excluded.node_id, token = o.token + 1, expires_ms = excluded.expires_ms
           where o.expires_ms <= ${dbNow}
         returning o.mkey, o.token`,
        [mine, id, ownerLeaseMs],
      );
      for (const { mkey, token } of taken) this.owned.set(mkey, { token, validUntil: sentAt + ownerLeaseMs - marginMs });
      this.armLapse();
      // Not awaited: a takeover's catch-up must not hold back the next renewal.
      for (const { mkey } of taken) {
        this.hooks.acquired(mkey).catch((error) => this.hooks.log(`vigil: cannot take over monitor ${mkey}: ${(error as Error).message}`));
      }
    } catch (error) {
      if (this.closed) return;
      this.hooks.log(`vigil: monitor ownership round failed: ${(error as Error).message}`);
      // A session that did not answer in time may be stuck: the next round opens another. The
      // leases held stay this node's until they lapse on its clock.
      const session = this.session;
      this.session = undefined;
      session?.end().catch(() => {});
    }
  }

  private async open(): Promise<pg.Client> {
    if (this.session) return this.session;
    const session = await this.connection.session();
    session.on('error', () => {
      if (this.session === session) this.session = undefined;
    });
    session.on('end', () => {
      if (this.session === session) this.session = undefined;
    });
    // A takeover waiting on a row a batch holds gives up within the round: renewals come first.
    await session.query('set lock_timeout = 1000');
    this.session = session;
    return session;
  }

  /** Extends this node's leases from the database's clock; a lease that lapsed or was taken over is lost. */
  private async renew(ask: <R extends pg.QueryResultRow>(text: string, values: unknown[]) => Promise<pg.QueryResult<R>>, id: string): Promise<void> {
    const terms = [...this.owned];
    if (terms.length === 0) return;
    const sentAt = performance.now();
    const { rows } = await ask<{ mkey: number }>(
      `update monitor_owners o set expires_ms = ${dbNow} + $3, node_id = $4
         from unnest($1::bigint[], $2::bigint[]) as t(mkey, token)
        where o.mkey = t.mkey and o.token = t.token and o.expires_ms > ${dbNow}
        returning o.mkey`,
      [terms.map(([mkey]) => mkey), terms.map(([, term]) => term.token), ownerLeaseMs, id],
    );
    const renewed = new Set(rows.map((r) => r.mkey));
    for (const [mkey, term] of terms) {
      if (this.owned.get(mkey) !== term) continue;
      if (renewed.has(mkey)) term.validUntil = sentAt + ownerLeaseMs - marginMs;
      else this.lose(mkey, 'another node took it over');
    }
    this.armLapse();
  }

  /** Stops the monitor's timers and source here; the next rounds free it once its poll in flight and queued writes are stored. */
  private handBack(mkey: number): void {
    this.handing.set(mkey, false);
    this.hooks.handingBack(mkey, pollWithinMs);
    const bound = new Promise<void>((resolve) => setTimeout(resolve, drainWithinMs).unref());
    void Promise.race([this.hooks.drained(mkey), bound])
      .catch(() => {})
      .then(() => {
        if (this.handing.has(mkey)) this.handing.set(mkey, true);
      });
  }

  private lose(mkey: number, why?: string): void {
    this.handing.delete(mkey);
    if (!this.owned.delete(mkey)) return;
    if (why) this.hooks.log(`vigil: this node stopped the timers and source of monitor ${mkey}: ${why}`);
    this.hooks.handedBack(mkey);
  }

  /** Gives up, at once, every monitor whose lease may have lapsed by this node's clock. */
  private dropLapsed(): void {
    const now = performance.now();
    const lapsed = [...this.owned].filter(([, term]) => term.validUntil <= now).map(([mkey]) => mkey);
    if (lapsed.length === 0) return;
    this.hooks.log(`vigil: the ownership of ${lapsed.length} monitor(s) lapsed (not renewed in time); this node stopped their timers and sources`);
    for (const mkey of lapsed) this.handing.delete(mkey);
    if (lapsed.length === this.owned.size) {
      this.owned.clear();
      this.hooks.released();
    } else {
      for (const mkey of lapsed) {
        this.owned.delete(mkey);
        this.hooks.handedBack(mkey);
      }
      this.armLapse();
    }
  }

  private armLapse(): void {
    clearTimeout(this.lapse);
    if (this.owned.size === 0) return;
    const first = Math.min(...[...this.owned.values()].map((t) => t.validUntil));
    this.lapse = setTimeout(() => this.dropLapsed(), Math.max(0, first - performance.now()) + 1);
    this.lapse.unref();
  }

  /** Stops renewing and frees this node's monitors at once: a clean stop is not a death to wait out. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    clearTimeout(this.lapse);
    await this.running?.catch(() => {});
    const session = this.session;
    this.session = undefined;
    const terms = [...this.owned];
    this.owned.clear();
    this.handing.clear();
    if (session && terms.length > 0) {
      await session
        .query('update monitor_owners o set expires_ms = 0 from unnest($1::bigint[], $2::bigint[]) as t(mkey, token) where o.mkey = t.mkey and o.token = t.token', [
          terms.map(([mkey]) => mkey),
          terms.map(([, term]) => term.token),
        ])
        .catch(() => {});
    }
    await session?.end().catch(() => {});
  }
}
