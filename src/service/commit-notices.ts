// A monitor's observations become readable when their batch commits: its
// committed head moves, its waiting readers wake, and whoever follows commits
// live (event streams, the dashboard, MCP resource subscriptions) hears of it.
import type { Feed } from './feed.ts';
import type { ServiceListeners } from './service-listener.ts';

export class CommitNotices {
  private readonly appended = new Set<Feed>();

  constructor(private readonly listeners: ServiceListeners) {}

  /** The feed has an observation in the batch being written. */
  appendedTo(feed: Feed): void {
    this.appended.add(feed);
  }

  /** Everything queued so far is stored. */
  committedAll(): void {
    const feeds = [...this.appended];
    this.appended.clear();
    for (const feed of feeds) this.readableUpTo(feed, feed.stats.head);
  }

  /**
   * A cluster node's batch stored these heads while the next batch may already be queued:
   * only the batch's own seqs become readable.
   */
  committedHeads(heads: ReadonlyMap<number, number>, feedByKey: (mkey: number) => Feed | undefined, nothingQueued: boolean): void {
    if (nothingQueued) this.appended.clear();
    for (const [mkey, head] of heads) {
      const feed = feedByKey(mkey);
      if (feed && head > feed.committedHead) this.readableUpTo(feed, head);
    }
  }

  /** Moves the feed's readable head and tells its readers and followers. */
  readableUpTo(feed: Feed, head: number): void {
    feed.committedHead = head;
    feed.notify();
    for (const follower of feed.followers) follower.committed();
    this.listeners.emit('recorded', feed);
  }
}
