// `feed`: polls an RSS, Atom or JSON Feed document (parsed by feedsmith) and
// writes each item it has not written before, deduplicated by id. The ids
// written and the ETag / Last-Modified of the last answer are stored, so a
// restart neither repeats items nor refetches an unchanged feed.
import { parseFeed } from 'feedsmith';
import { readBounded } from '../../net/read-bounded.ts';
import { redactCredentials } from '../../net/redact.ts';
import type { SourceRun } from '../run.ts';
import { linkedSignal } from '../../timing/linked-signal.ts';

interface FeedCursor {
  seen: string[];
  etag?: string;
  modified?: string;
}

interface Item {
  id: string;
  title: string | null;
  link: string | null;
  published: string | null;
}

/** Ids remembered per monitor: more than any feed serves at once. */
const maxSeen = 2000;
const maxFeedBytes = 8 << 20;

const textOf = (value: unknown): string | null =>
  typeof value === 'string' ? value : typeof value === 'object' && value !== null && 'value' in value ? String((value as { value: unknown }).value) : null;

function itemsOf(document: string): Item[] {
  const { format, feed } = parseFeed(document) as { format: string; feed: Record<string, unknown> };
  const raw = ((format === 'atom' ? feed.entries : feed.items) ?? []) as Array<Record<string, unknown>>;
  const items: Item[] = [];
  for (const entry of raw) {
    const link =
      textOf(entry.link) ?? textOf(entry.url) ?? (Array.isArray(entry.links) ? textOf((entry.links[0] as { href?: unknown })?.href) : null);
    const id = textOf(entry.guid) ?? textOf(entry.id) ?? link ?? textOf(entry.title);
    if (id === null) continue;
    items.push({
      id,
      title: textOf(entry.title),
      link,
      published: textOf(entry.pubDate) ?? textOf(entry.published) ?? textOf(entry.date_published) ?? textOf(entry.updated),
    });
  }
  return items;
}

export function runFeed(run: SourceRun): void {
  const { url, interval_s: interval } = run.settings<{ url: string; interval_s: number }>();
  run.every(interval * 1000, async () => {
    const previous = run.cursor<FeedCursor>() ?? { seen: [] };
    const headers: Record<string, string> = { accept: 'application/rss+xml, application/atom+xml, application/feed+json, application/json, text/xml;q=0.9, */*;q=0.5' };
    if (previous.etag) headers['if-none-match'] = previous.etag;
    if (previous.modified) headers['if-modified-since'] = previous.modified;
    const linked = linkedSignal([run.signal], 30_000);
    let response: Awaited<ReturnType<typeof run.outbound.fetch>>;
    let body: Buffer;
    try {
      response = await run.outbound.fetch(url, { headers, signal: linked.signal });
      if (response.status === 304) {
        await response.body?.cancel();
        run.contact();
        return;
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw new Error(`${url} answered ${response.status}`);
      }
      const chunks: Uint8Array[] = [];
      const read = await readBounded(response, maxFeedBytes, (chunk) => chunks.push(chunk));
      if (read.truncated) throw new Error(`${url} is larger than ${maxFeedBytes} bytes`);
      body = Buffer.concat(chunks);
    } finally {
      linked.dispose();
    }
    let items: Item[];
    try {
      items = itemsOf(body.toString('utf8'));
    } catch (error) {
      throw new Error(`${url} is not an RSS, Atom or JSON Feed document: ${(error as Error).message}`);
    }
    const seen = new Set(previous.seen);
    // Feeds list the newest first: write the oldest new item first.
    const fresh = items.filter((item) => !seen.has(item.id)).reverse();
    const cursor: FeedCursor = {
      seen: previous.seen,
      etag: response.headers.get('etag') ?? undefined,
      modified: response.headers.get('last-modified') ?? undefined,
    };
    if (fresh.length === 0) {
      run.setCursor(cursor);
      run.contact();
      return;
    }
    for (const item of fresh) {
      cursor.seen = [...cursor.seen, item.id].slice(-maxSeen);
      run.emit({ subject: item.id, data: { feed: redactCredentials(url), ...item }, sourceRef: item.link, cursor: { ...cursor } });
    }
  });
}
