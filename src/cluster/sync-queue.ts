// The order of a cluster node's catch-ups on each monitor (monitor-sync.ts):
// one after another, and one asked for while another of the same kind waits
// its turn joins it instead of queuing a read of its own. The waiting one
// reads the database after the rev its joiners read, so it serves them all.
// Without joining, every request on a monitor that other nodes kept changing,
// and every other node's commit (a node with a dashboard follows them all),
// queued one more read, and a request waited behind the whole queue: 10-14 s
// under `vigil bench leases` across three nodes.

/** Kinds of catch-up that may be joined, and the rev a joiner needs (undefined: what the database holds now). */
export type JoinableSync = { readonly mode: 'delta'; readonly until: number | undefined } | { readonly mode: 'refresh' };

interface Waiting {
  readonly mode: JoinableSync['mode'];
  until: number | undefined;
  done: Promise<void>;
}

export class SyncQueue {
  /** The last work queued per monitor. */
  private readonly tails = new Map<number, Promise<void>>();
  /** A joinable catch-up per monitor that has not started yet. */
  private readonly waiting = new Map<number, Waiting>();

  /**
   * Queues `work` on the monitor, after what is queued already. A joinable catch-up joins one of its
   * mode that waits its turn; when it starts, `work` is given the highest rev its joiners need.
   */
  run(mkey: number, work: (until: number | undefined) => Promise<void>, joinable?: JoinableSync): Promise<void> {
    const asked = joinable?.mode === 'delta' ? joinable.until : undefined;
    const waiting = this.waiting.get(mkey);
    if (joinable && waiting?.mode === joinable.mode) {
      waiting.until = asked === undefined || waiting.until === undefined ? undefined : Math.max(waiting.until, asked);
      return waiting.done;
    }
    const entry: Waiting | undefined = joinable && { mode: joinable.mode, until: asked, done: Promise.resolve() };
    const previous = this.tails.get(mkey) ?? Promise.resolve();
    const next = previous
      .catch(() => {})
      .then(() => {
        if (entry && this.waiting.get(mkey) === entry) this.waiting.delete(mkey);
        return work(entry?.until);
      });
    if (entry) {
      entry.done = next;
      this.waiting.set(mkey, entry);
    }
    this.tails.set(mkey, next);
    void next
      .finally(() => {
        if (this.tails.get(mkey) === next) this.tails.delete(mkey);
      })
      .catch(() => {});
    return next;
  }

  /** Work on the monitor is queued or under way. */
  busy(mkey: number): boolean {
    return this.tails.has(mkey);
  }

  /** Settles once everything queued so far has run. */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.tails.values()]);
  }
}
