// Take-next's lines (take-queue.ts), one per monitor and set of filters that
// a subscription took from, told of every change of a lease on their monitor.
// At most `maxLines` are kept: the least recently used goes, and is built
// again (its frontier from the start of the log) when it is next used.
import type { Filter } from '../protocol/filter.ts';
import { queuedOfText } from '../store/lease-record-text.ts';
import type { LeaseState } from '../store/records.ts';
import type { Feed } from './feed.ts';
import { type QueueHost, type Standing, TakeQueue } from './take-queue.ts';

export const maxLines = 64;

/** A lease row as a cluster node reads it from the database (its record as stored JSON text). */
export interface StoredLeaseRow {
  readonly subject: string;
  readonly state: string;
  readonly expires_ms: number | null;
  readonly record: string;
}

export class TakeQueues {
  private readonly byMonitor = new Map<number, Map<string, TakeQueue>>();
  private lines = 0;

  constructor(
    private readonly host: QueueHost,
    private readonly now: () => number,
  ) {}

  /** The line of this monitor for these filters (made on first use). */
  lineOf(feed: Feed, filters: readonly Filter[]): TakeQueue {
    const key = filters.length === 0 ? '' : JSON.stringify(filters);
    let lines = this.byMonitor.get(feed.key);
    let line = lines?.get(key);
    if (!line || line.feed !== feed) {
      if (!lines) {
        lines = new Map();
        this.byMonitor.set(feed.key, lines);
      }
      if (!line) this.lines++;
      line = new TakeQueue(feed, filters, this.host);
      lines.set(key, line);
      if (this.lines > maxLines) this.dropColdest(line);
    }
    line.usedAt = this.now();
    return line;
  }

  has(mkey: number): boolean {
    return this.byMonitor.has(mkey);
  }

  /** A lease of the monitor changed: every line of it hears. */
  changed(mkey: number, subject: string, standing: Standing): void {
    const lines = this.byMonitor.get(mkey);
    if (!lines) return;
    const now = this.now();
    for (const line of lines.values()) line.changed(subject, standing, now);
  }

  /** A cluster node caught up on the monitor (`whole`: after a refused batch, memory was replaced whole). */
  reloaded(mkey: number, rows: readonly StoredLeaseRow[], whole: boolean): void {
    const lines = this.byMonitor.get(mkey);
    if (!lines) return;
    if (whole) for (const line of lines.values()) line.reloaded();
    for (const row of rows) {
      const queued = queuedOfText(row.record);
      this.changed(mkey, row.subject, { state: row.state as LeaseState, expiresMs: row.expires_ms, queued });
    }
  }

  /** The monitor is no longer held in memory. */
  forget(mkey: number): void {
    const lines = this.byMonitor.get(mkey);
    if (!lines) return;
    this.lines -= lines.size;
    this.byMonitor.delete(mkey);
  }

  private dropColdest(keep: TakeQueue): void {
    let coldest: { mkey: number; key: string; usedAt: number } | undefined;
    for (const [mkey, lines] of this.byMonitor) {
      for (const [key, line] of lines) {
        if (line !== keep && (!coldest || line.usedAt < coldest.usedAt)) coldest = { mkey, key, usedAt: line.usedAt };
      }
    }
    if (!coldest) return;
    const lines = this.byMonitor.get(coldest.mkey)!;
    lines.delete(coldest.key);
    this.lines--;
    if (lines.size === 0) this.byMonitor.delete(coldest.mkey);
  }
}
