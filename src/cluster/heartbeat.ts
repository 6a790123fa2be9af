// Which nodes of a cluster are alive: each node writes its id, URL and the
// database's time into `cluster_nodes` every second; a node not seen for
// `liveForMs` is not listed (it died, or cannot reach the database). /discover
// lists the live nodes; the database's clock alone is compared, never a node's.
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { PgConnection } from '../store/postgres/pg-connection.ts';

const intervalMs = 1_000;
export const liveForMs = 5_000;

export interface NodeInfo {
  readonly id: string;
  readonly url: string;
}

export class Heartbeat {
  private nodes: NodeInfo[] = [];
  private beatAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly connection: PgConnection,
    private readonly self: NodeInfo,
    private readonly log: (line: string) => void,
  ) {}

  async start(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => void this.beat(), intervalMs);
    this.timer.unref();
  }

  /**
   * The nodes seen within `liveForMs` at the last beat, this one first. A list older than that
   * (the database unreachable) is not trusted: this node alone.
   */
  live(): readonly NodeInfo[] {
    return this.nodes.length > 0 && Date.now() - this.beatAt < liveForMs ? this.nodes : [this.self];
  }

  /**
   * The live node a key is assigned to: rendezvous (highest random weight) hashing over the live ids,
   * those in `among` only when given (and this node).
   */
  assignee(key: number, among?: ReadonlySet<string>): string {
    let best = this.self.id;
    let bestWeight = -1;
    for (const { id } of this.live()) {
      if (among && id !== this.self.id && !among.has(id)) continue;
      const weight = createHash('sha256').update(`${id}\u0000${key}`).digest().readUInt32BE(0);
      if (weight > bestWeight || (weight === bestWeight && id < best)) [best, bestWeight] = [id, weight];
    }
    return best;
  }

  private beat(): Promise<void> {
    this.beating ??= this.write().finally(() => {
      this.beating = undefined;
    });
    return this.beating;
  }

  private async write(): Promise<void> {
    if (this.closed) return;
    try {
      const now = sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`;
      const { rows } = await sql<{ id: string; url: string }>`
        with beat as (
          insert into cluster_nodes (id, url, seen_ms) values (${this.self.id}, ${this.self.url}, ${now})
          on conflict (id) do update set url = excluded.url, seen_ms = excluded.seen_ms
        )
        select id, url from cluster_nodes where seen_ms > ${now} - ${liveForMs} and id <> ${this.self.id} order by id`.execute(this.connection.db);
      this.nodes = [this.self, ...rows];
      this.beatAt = Date.now();
    } catch (error) {
      if (!this.closed) this.log(`vigil: cluster heartbeat failed: ${(error as Error).message}`);
    }
  }

  /** Stops beating and leaves the list at once (a clean stop is not a death to wait out). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.beating?.catch(() => {});
    await sql`delete from cluster_nodes where id = ${this.self.id}`.execute(this.connection.db).catch(() => {});
  }
}
