// The newest committed rows of one feed, read once per commit and shared by
// every caught-up unfiltered reader. After a commit, thousands of open
// streams of a monitor all ask for the same rows (from the previous head to
// the new one); one read and one array serve them all, so a door can also
// frame that array once.
import type { Store } from '../store/store.ts';

export type FeedRows = ReadonlyArray<{ seq: number; body: string }>;

interface Cached {
  readonly from: number;
  readonly head: number;
  readonly floor: number;
  readonly limit: number;
  readonly rows: FeedRows;
}

export class SharedTail {
  private cached: Cached | undefined;

  /**
   * Unfiltered rows with seq ≥ from, at most `limit`. The stored rows of a feed change
   * only when its committed head moves (appends) or its retention floor moves
   * (compaction), so a read made for the same (from, head, floor) is still exact.
   */
  read(store: Store, mkey: number, from: number, limit: number, head: number, floor: number): FeedRows {
    const c = this.cached;
    if (c && c.from === from && c.head === head && c.floor === floor) {
      if (c.limit === limit) return c.rows;
      if (c.rows.length < c.limit || c.limit > limit) return c.rows.length <= limit ? c.rows : c.rows.slice(0, limit);
    }
    const rows = store.readFeed(mkey, from, limit, [], head);
    this.cached = { from, head, floor, limit, rows };
    return rows;
  }
}
