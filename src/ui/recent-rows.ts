// The dashboard's one cache of recent observations, shared by every view
// (issue 42): per monitor, its latest observations of every type and its
// latest own ones (bookkeeping folded), brought up to the committed head by
// reading only the rows not seen yet. Each viewer's Observations filter runs
// over these rows in memory: a view per filter that queried the store per
// monitor on every rebuild made 50 filtered viewers cost publish and
// /discover about 0.9 s.
import type { Feed } from '../service/feed.ts';
import type { MonitorService } from '../service/service.ts';
import { bookkeepingTypes, latestMatching, type ObservationFilter } from './observation-filter.ts';

export type ServedRow = { monitor: string; seq: number; type: string; subject: string | null; time: string; actor: string; data: unknown };

/** Rows kept per monitor and list: at most this many ... */
export const keptRows = 200;
/** ... and beyond the newest `minRows`, only while their bodies stay within this many bytes. */
const keptBytes = 512 << 10;
const minRows = 20;
/** Rows read in one catch-up; a monitor further behind is read afresh. */
const catchUpRows = 2000;

export function servedRow(feed: Feed, row: { seq: number; body: string }): ServedRow {
  const o = JSON.parse(row.body) as { type: string; subject: string | null; time: string; actor: string; data: Record<string, unknown> };
  const { provenance: _p, tags: _t, ...data } = o.data ?? {};
  return { monitor: feed.id, seq: row.seq, type: o.type, subject: o.subject, time: o.time, actor: o.actor, data };
}

interface Kept {
  rows: ServedRow[];
  bytes: number[];
}

interface FeedRows {
  head: number;
  /** Every type, oldest first. */
  all: Kept;
  /** Without the protocol's bookkeeping, oldest first (read further back than `all` when it is scarce). */
  own: Kept;
}

const isOwn = (type: string) => !bookkeepingTypes.includes(type);

function trim(kept: Kept): void {
  let total = 0;
  let keep = 0;
  for (let i = kept.rows.length - 1; i >= 0; i--) {
    total += kept.bytes[i]!;
    if (keep >= keptRows || (keep >= minRows && total > keptBytes)) break;
    keep++;
  }
  if (keep < kept.rows.length) {
    kept.rows.splice(0, kept.rows.length - keep);
    kept.bytes.splice(0, kept.bytes.length - keep);
  }
}

export class RecentRows {
  private readonly feeds = new Map<number, FeedRows>();

  constructor(private readonly service: MonitorService) {}

  /** The monitor's latest rows of every type, up to its committed head. */
  all(feed: Feed): readonly ServedRow[] {
    return this.current(feed)?.all.rows ?? [];
  }

  /** The monitor's latest rows that pass `filter` (its own ones unless it asks for bookkeeping), at most `limit`, oldest first. */
  matching(feed: Feed, filter: ObservationFilter, limit: number): ServedRow[] {
    const rows = this.current(feed);
    if (!rows) return [];
    const from = filter.bookkeeping ? rows.all.rows : rows.own.rows;
    const out: ServedRow[] = [];
    for (let i = from.length - 1; i >= 0 && out.length < limit; i--) {
      const row = from[i]!;
      if (filter.type !== undefined && row.type !== filter.type) continue;
      if (filter.subject !== undefined && row.subject !== filter.subject) continue;
      if (filter.actor !== undefined && row.actor !== filter.actor) continue;
      out.push(row);
    }
    return out.reverse();
  }

  /** Forgets the monitors not in `keep` (no longer shown), once the cache holds many more. */
  prune(keep: ReadonlySet<number>): void {
    if (this.feeds.size <= keep.size * 2) return;
    for (const key of this.feeds.keys()) if (!keep.has(key)) this.feeds.delete(key);
  }

  private current(feed: Feed): FeedRows | undefined {
    const head = feed.committedHead;
    if (head === 0) return undefined;
    let rows = this.feeds.get(feed.key);
    if (rows && rows.head === head) return rows;
    if (rows && rows.head < head && head - rows.head <= catchUpRows) {
      const fresh = this.service.store.readFeed(feed.key, rows.head + 1, head - rows.head, [], head);
      for (const row of fresh) {
        const served = servedRow(feed, row);
        rows.all.rows.push(served);
        rows.all.bytes.push(row.body.length);
        if (isOwn(served.type)) {
          rows.own.rows.push(served);
          rows.own.bytes.push(row.body.length);
        }
      }
      rows.head = head;
      trim(rows.all);
      trim(rows.own);
      return rows;
    }
    // First use, far behind, or the head went back (a cluster node that reloaded): read afresh.
    const from = Math.max(1, head - keptRows + 1);
    const all = this.service.store.readFeed(feed.key, from, keptRows, [], head);
    const own = latestMatching(this.service, feed, { bookkeeping: false }, keptRows);
    rows = {
      head,
      all: { rows: all.map((row) => servedRow(feed, row)), bytes: all.map((row) => row.body.length) },
      own: { rows: own.map((row) => servedRow(feed, row)), bytes: own.map((row) => row.body.length) },
    };
    trim(rows.all);
    trim(rows.own);
    this.feeds.set(feed.key, rows);
    return rows;
  }
}
