// What a lease client writes down about each of its holds, on its own clock
// (clock.ts): the claim that granted it, its renewals, how it ended (or that
// the client died holding it). The judge (lease-judge.ts) reads nothing else.
import { emptyHistogram, type Histogram } from './histogram.ts';

export type LeaseOp = 'claim' | 'renew' | 'complete' | 'release' | 'reject' | 'subscribe';

/** One request as its client saw it. */
export interface OpRecord {
  op: LeaseOp;
  /** When the request was sent and when its answer was read (ms, clock.ts). */
  send: number;
  answer: number;
  status: number;
  /** The refusal's code, or why no answer came. */
  code?: string;
  /** A complete, release or reject that also asked for the next subject (take-next). */
  next?: boolean;
}

export interface Hold {
  /** The client's number (its incarnations after crashes keep it). */
  client: number;
  /** The holder the server knows: the subscription id of this incarnation. */
  holder: string;
  subject: string;
  /** The lease duration asked for, ms. */
  durationMs: number;
  /** The request that granted the hold: a claim, or a complete/release/reject with next. */
  grant: OpRecord;
  fence: number | null;
  renews: OpRecord[];
  /** The complete, release or reject that ended it, as sent and answered. */
  end?: OpRecord;
  /** The client died holding it (--crash): when. */
  crashedAt?: number;
  /** The client stopped renewing and ended it past its lease (--stall). */
  stalled?: boolean;
  /** A renewal was refused: the client gave the hold up without ending it. */
  lost?: boolean;
  /** Send and answer time of the grant or of the last accepted renewal. */
  validSend: number;
  validAnswer: number;
}

/** Ended by an accepted complete, release or reject. */
export const endedOk = (h: Hold): boolean => h.end !== undefined && h.end.status >= 200 && h.end.status < 300;

/**
 * Until when the client's records prove the hold: its lease lasted at least until its last accepted
 * claim or renewal was sent plus the lease duration (the server can only have started it after the
 * request was sent), and the client held it until it sent its end.
 */
export const provenUntil = (h: Hold): number => Math.min(h.end?.send ?? Number.POSITIVE_INFINITY, h.validSend + h.durationMs);

/** The latest moment the lease can have expired when nobody ended it: its last grant or renewal answered, plus the duration. */
export const latestExpiry = (h: Hold): number => h.validAnswer + h.durationMs;

/** What a thread sends the main thread, every flush. */
export interface LeaseBatch {
  type: 'batch';
  thread: number;
  /** Holds that ended (or were given up) since the last flush. */
  holds: Hold[];
  /** Every hold this thread reports later was granted at or after this time. */
  low: number;
  /** Latency per operation since the last flush. */
  latency: Partial<Record<string, Histogram>>;
  /** Outcomes per "op code" (e.g. "claim LEASE_HELD", "complete ok") since the last flush. */
  outcomes: Record<string, number>;
  /** Refused or failed requests per quarter second of the run (index from the run's start). */
  refusedSeries: Record<number, number>;
  /** Requests per quarter second. */
  requestSeries: Record<number, number>;
  /** Per node (index in --base): latency of every request, and those refused or unanswered. */
  nodes: Record<number, NodeTally>;
}

export interface NodeTally {
  latency: Histogram;
  refused: number;
  unanswered: number;
}

/** The tally of `node`, made empty on first use. */
export function nodeTally(nodes: Record<number, NodeTally>, node: number): NodeTally {
  let n = nodes[node];
  if (!n) {
    n = { latency: emptyHistogram(), refused: 0, unanswered: 0 };
    nodes[node] = n;
  }
  return n;
}

export interface ThreadDone {
  type: 'done';
  thread: number;
  /** Event-loop utilisation of the thread over the run (0..1): near 1 means it could not keep up. */
  elu: number;
}

export const seriesStepMs = 250;
