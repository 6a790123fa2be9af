// The replica budget: when a node's replica takes more than its budget, the
// monitors it used least recently, and not in the last few seconds, are
// dropped from it (and from memory) until it fits again. A dropped monitor is
// as if this node never saw it: its next use catches up on it from
// PostgreSQL, page by page (replica-pages.ts). Monitors someone waits on here
// and monitors whose live source runs here are never dropped; a monitor whose
// timers run here goes dormant: dropped, and read again when its next
// deadline comes or another node moves one (MonitorSync.dropCold).

/** Observations deleted per step: a million rows deleted at once would stall the node for seconds. */
const dropPage = 20_000;

export interface BudgetHooks {
  /** Bytes the replica's rows take now. */
  usedBytes(): number;
  /**
   * Drops a monitor unless it is in use ('kept'); 'absent' when the replica does not hold it; 'dormant'
   * when dropped though its timers run here (its next deadline reads it again).
   */
  drop(mkey: number): Promise<'dropped' | 'dormant' | 'kept' | 'absent'>;
  log(line: string): void;
}

export interface BudgetOptions {
  readonly budgetBytes: number;
  /** A monitor not used for this long may be dropped. */
  readonly coldMs: number;
  /** How often the replica's size is checked. */
  readonly checkMs: number;
  readonly now?: () => number;
}

export class ReplicaBudget {
  /** Last use of each monitor the replica holds, least recent first. */
  private readonly lastUse = new Map<number, number>();
  private readonly timer: NodeJS.Timeout;
  private checking: Promise<void> | undefined;
  private soon: NodeJS.Immediate | undefined;
  private closed = false;
  private readonly now: () => number;

  constructor(
    private readonly hooks: BudgetHooks,
    private readonly options: BudgetOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.timer = setInterval(() => void this.check(), options.checkMs);
    this.timer.unref();
  }

  touch(mkey: number): void {
    this.lastUse.delete(mkey);
    this.lastUse.set(mkey, this.now());
  }

  /** Not used for the cold time (nor ever, as far as the budget knows). */
  isCold(mkey: number): boolean {
    return (this.lastUse.get(mkey) ?? 0) <= this.now() - this.options.coldMs;
  }

  /**
   * The replica just grew (a catch-up, a batch): checked at the end of this turn rather than at the next
   * interval, so that a node filling its replica quickly does not run far past its budget meanwhile.
   */
  checkSoon(): void {
    if (this.closed || this.checking || this.soon) return;
    this.soon = setImmediate(() => {
      this.soon = undefined;
      // The replica closes after close(): a batch committed during the stop must not measure it.
      if (!this.closed && this.hooks.usedBytes() > this.options.budgetBytes) void this.check();
    });
  }

  /** Drops cold monitors while the replica is over its budget. */
  check(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.checking ??= this.fit().finally(() => {
      this.checking = undefined;
    });
    return this.checking;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    if (this.soon) clearImmediate(this.soon);
    await this.checking;
  }

  private async fit(): Promise<void> {
    const used = this.hooks.usedBytes();
    if (used <= this.options.budgetBytes) return;
    let dropped = 0;
    let dormant = 0;
    for (const [mkey, at] of [...this.lastUse]) {
      if (!this.isCold(mkey)) continue;
      let outcome: Awaited<ReturnType<BudgetHooks['drop']>>;
      try {
        outcome = await this.hooks.drop(mkey);
      } catch (error) {
        this.hooks.log(`vigil: cannot drop monitor ${mkey} from the replica: ${(error as Error).message}`);
        continue;
      }
      if (outcome === 'kept') continue;
      if (this.lastUse.get(mkey) === at) this.lastUse.delete(mkey);
      if (outcome === 'absent') continue;
      dropped++;
      if (outcome === 'dormant') dormant++;
      if (this.hooks.usedBytes() <= this.options.budgetBytes) break;
    }
    if (dropped > 0) {
      const mb = (bytes: number) => Math.round(bytes / (1 << 20));
      this.hooks.log(`vigil: the replica took ${mb(used)} MB of its ${mb(this.options.budgetBytes)} MB budget: dropped ${dropped} cold monitor(s) (${dormant} dormant: their timers run here, and their next deadline reads them again), now ${mb(this.hooks.usedBytes())} MB; they are read again from PostgreSQL when used`);
    }
  }
}

/** Free pages given back to the file system per step. */
const shrinkPages = 2048;

/** Deletes a monitor's rows from the replica, its observations a step at a time, then gives the freed pages back. */
export async function dropFromReplica(
  replica: { dropMonitor(mkey: number): void; dropObservations(mkey: number, count: number): number; shrink(pages: number): number },
  mkey: number,
  replicaFree: () => Promise<void>,
): Promise<void> {
  await replicaFree();
  replica.dropMonitor(mkey);
  for (;;) {
    await replicaFree();
    if (replica.dropObservations(mkey, dropPage) < dropPage) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  for (;;) {
    await replicaFree();
    if (replica.shrink(shrinkPages) <= shrinkPages) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
