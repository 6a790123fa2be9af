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
  /** Races this node's writes lost to other nodes since it started, and what came of them (/admin/snapshot). */
  readonly contention: ClusterContention;
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

/** Counts since the node started: a monitor that several nodes write shows here (docs/scaling.md). */
export interface ClusterContention {
  /** Attempts of requests and source writes refused because another node changed the monitor first. */
  readonly lost_races: number;
  /** The most races one request or source write lost (its retries; at 50 it gives up). */
  readonly most_lost_by_one_write: number;
  /** Writes that lost every attempt: a request is answered 503 STORE_UNAVAILABLE, a source's write is kept and tried again later. */
  readonly gave_up: number;
  /** Times this node asked the others for a turn on a monitor (src/cluster/turns.ts). */
  readonly turns_asked: number;
  /** Times it held its own batches back for another node's turn. */
  readonly turns_held_for_others: number;
}
