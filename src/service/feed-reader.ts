// Reads one page of a feed after a cursor, waiting for a matching
// observation when asked to: a waiting read is woken by the commit that
// stores the observation, never by polling.
import type { Filter } from '../protocol/filter.ts';
import { markRedelivered } from '../protocol/observation.ts';
import { RawJson } from '../protocol/raw-json.ts';
import type { Feed } from './feed.ts';
import type { MonitorService } from './service.ts';

export interface PageRequest {
  readonly from: number;
  readonly limit: number;
  readonly waitMs: number;
  readonly filters: readonly Filter[];
  readonly signal?: AbortSignal | undefined;
  /** Observations up to this seq were shown before: they are marked redelivered. */
  readonly maxShown: number;
  /** The page stops once its observations hold this many bytes (it always holds at least one). */
  readonly maxBytes: number;
}

export interface Page {
  readonly observations: RawJson[];
  /** The cursor to acknowledge after handling this page. */
  readonly next: number;
  readonly head: number;
  readonly lastSeq: number | null;
  /** How many observations of the page were shown to this subscription before (the base protocol's whole number). */
  readonly redelivered: number;
}

type Row = { seq: number; body: string };

interface Read {
  readonly rows: Row[];
  readonly head: number;
  /** The byte budget stopped the page before `limit` rows. */
  readonly cut?: boolean;
}

export async function readPage(service: MonitorService, feed: Feed, request: PageRequest): Promise<Page> {
  const read = (): Read => {
    const head = feed.committedHead;
    return { ...readWithin(service, feed, request, head), head };
  };
  let result = read();
  if (result.rows.length === 0 && request.waitMs > 0 && !request.signal?.aborted && !service.isDraining) {
    result = await waitForRows(service, feed, request, read);
  }
  const { rows, head } = result;
  const last = rows.at(-1);
  let redelivered = 0;
  const observations = rows.map((row) => {
    if (row.seq <= request.maxShown) {
      redelivered++;
      return new RawJson(markRedelivered(row.body));
    }
    return new RawJson(row.body);
  });
  // A full page (by count or by bytes) may stop before head; a shorter one has examined everything up to head.
  const full = rows.length === request.limit || result.cut === true;
  const next = full && last ? last.seq + 1 : Math.max(request.from, head + 1);
  return { observations, next, head, lastSeq: last?.seq ?? null, redelivered };
}

const firstChunk = 16;

/**
 * Up to `limit` matching rows from `from`, read in chunks sized from the rows
 * seen so far, stopping before the one that would pass the byte budget: a page
 * of megabyte observations never sits in memory whole.
 */
function readWithin(service: MonitorService, feed: Feed, request: PageRequest, head: number): { rows: Row[]; cut: boolean } {
  const rows: Row[] = [];
  let bytes = 0;
  let from = request.from;
  let chunk = Math.min(firstChunk, request.limit);
  for (;;) {
    const batch = service.store.readFeed(feed.key, from, chunk, request.filters, head);
    for (const row of batch) {
      if (rows.length > 0 && bytes + row.body.length > request.maxBytes) return { rows, cut: true };
      rows.push(row);
      bytes += row.body.length;
    }
    if (batch.length < chunk || rows.length >= request.limit) return { rows, cut: false };
    from = batch.at(-1)!.seq + 1;
    const average = bytes / rows.length;
    chunk = Math.max(1, Math.min(request.limit - rows.length, Math.floor((request.maxBytes - bytes) / average) + 1));
  }
}

function waitForRows(service: MonitorService, feed: Feed, request: PageRequest, read: () => Read): Promise<Read> {
  return new Promise((resolve) => {
    let timer: unknown;
    const finish = (result: Read) => {
      service.clock.clearTimeout(timer);
      feed.waiters.delete(waiter);
      request.signal?.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const waiter = () => {
      if (service.isDraining) {
        finish(read());
        return true;
      }
      if (feed.committedHead < request.from) return false;
      const result = read();
      if (result.rows.length === 0) return false;
      finish(result);
      return true;
    };
    const onAbort = () => finish({ rows: [], head: feed.committedHead });
    timer = service.clock.setTimeout(() => finish(read()), request.waitMs);
    request.signal?.addEventListener('abort', onAbort, { once: true });
    feed.waiters.add(waiter);
  });
}
