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
}

export interface Page {
  readonly observations: RawJson[];
  /** The cursor to acknowledge after handling this page. */
  readonly next: number;
  readonly head: number;
  readonly lastSeq: number | null;
  readonly redelivered: boolean;
}

interface Read {
  readonly rows: Array<{ seq: number; body: string }>;
  readonly head: number;
}

export async function readPage(service: MonitorService, feed: Feed, request: PageRequest): Promise<Page> {
  const read = (): Read => {
    const head = feed.committedHead;
    return { rows: service.store.readFeed(feed.key, request.from, request.limit, request.filters), head };
  };
  let result = read();
  if (result.rows.length === 0 && request.waitMs > 0 && !request.signal?.aborted && !service.isClosed) {
    result = await waitForRows(service, feed, request, read);
  }
  const { rows, head } = result;
  const last = rows.at(-1);
  let redelivered = false;
  const observations = rows.map((row) => {
    if (row.seq <= request.maxShown) {
      redelivered = true;
      return new RawJson(markRedelivered(row.body));
    }
    return new RawJson(row.body);
  });
  // A full page may stop before head; a shorter one has examined everything up to head.
  const next = rows.length === request.limit && last ? last.seq + 1 : Math.max(request.from, head + 1);
  return { observations, next, head, lastSeq: last?.seq ?? null, redelivered };
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
      if (service.isClosed) {
        finish({ rows: [], head: feed.committedHead });
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
