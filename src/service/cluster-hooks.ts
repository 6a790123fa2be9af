// What the service asks of the cluster it runs in (src/cluster), when it runs in one.
import type { TargetedOperation } from './operation-targets.ts';

/** A node of a cluster (src/cluster): runs each operation against fresh state and names the node. */
export interface ClusterNodeHooks {
  readonly node: { readonly id: string; readonly store: 'postgres' };
  /** The nodes alive now (their heartbeats), this one first. */
  liveNodes(): readonly { readonly id: string; readonly url: string }[];
  /** The database's URL (redacted where shown). */
  readonly storeUrl: string;
  /** How many monitors' timers and sources run on this node. */
  readonly timerMonitors: number;
  /** Runs one operation (operation-targets.ts names the monitor it touches) on fresh state. */
  run<T>(operation: TargetedOperation, input: unknown, attempt: () => Promise<T>): Promise<T>;
  /** A write the server makes on its own on one monitor (a live source), retried like a request; undefined once stored, else why not. */
  writeOn(mkey: number, attempt: () => Promise<void>): Promise<Error | undefined>;
  /** Catches up on every monitor in the database. */
  refreshAll(): Promise<void>;
  /** Timers and live sources of a monitor run on the node owning it only. */
  runsTimersOf(mkey: number): boolean;
  /** The fencing token of this node's ownership of the monitor; undefined when it does not own it now. */
  ownerToken(mkey: number): number | undefined;
}
