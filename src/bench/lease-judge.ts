// Judges a lease run from the clients' own records, never from the server's
// word (lease-records.ts says what a client writes down):
// - duplicate: two holders whose holds provably overlapped. A hold is proven
//   from its grant's answer until the earlier of its end being sent and its
//   last accepted claim or renewal being sent plus the lease duration (the
//   server cannot have started the lease before the request was sent). Two
//   proven intervals of different holders that intersect are a violation.
// - late end accepted: a complete, release or reject that the server accepted
//   although another holder had been granted the subject (and provably held
//   it) after this hold's grant and before its end was sent: the lease had
//   expired and been re-granted, so the end must have been refused.
// - reclaim time: from the latest moment a crashed holder's lease can have
//   expired to the next grant of its subject.
// Holds arrive out of order from several threads; a thread's low-water mark
// (every hold it reports later was granted after it) lets the judge forget
// holds no later hold can be paired with, so memory stays bounded.
import { endedOk, type Hold, latestExpiry, provenUntil } from './lease-records.ts';

export interface Violation {
  kind: 'duplicate' | 'late end accepted';
  subject: string;
  /** The earlier grant and the later one (for a late end: the hold whose end was accepted, then the other). */
  holds: [Hold, Hold];
  why: string;
}

/** Whether the records prove that both holders held the subject at once. */
export function provablyOverlap(a: Hold, b: Hold): boolean {
  if (a.holder === b.holder || a.subject !== b.subject) return false;
  return Math.max(a.grant.answer, b.grant.answer) < Math.min(provenUntil(a), provenUntil(b));
}

/** Whether `a`'s accepted end came after `b` was granted (and provably held) later than `a`. */
export function endAcceptedAfterRegrant(a: Hold, b: Hold): boolean {
  if (a.holder === b.holder || a.subject !== b.subject || !endedOk(a)) return false;
  return a.grant.answer < b.grant.answer && b.grant.answer < a.end!.send && b.grant.answer < provenUntil(b);
}

/** A time of the run, as ms from its start. */
const at = (t: number, origin: number) => `+${(t - origin).toFixed(1)} ms`;

function explainOverlap(a: Hold, b: Hold, origin: number): string {
  const ms = (t: number) => at(t, origin);
  const [first, second] = a.grant.answer <= b.grant.answer ? [a, b] : [b, a];
  const until = provenUntil(first);
  const by = first.end && first.end.send === until ? `its ${first.end.op} was sent at ${ms(until)}` : `its lease lasted at least until ${ms(until)} (last accepted claim or renewal sent at ${ms(first.validSend)} + the lease's ${first.durationMs} ms)`;
  return `${second.holder} was granted "${second.subject}" (answer at ${ms(second.grant.answer)}) while ${first.holder} provably held it: granted at ${ms(first.grant.answer)}, and ${by}`;
}

function explainLate(a: Hold, b: Hold, origin: number): string {
  const ms = (t: number) => at(t, origin);
  return `${a.holder}'s ${a.end!.op} of "${a.subject}" (sent at ${ms(a.end!.send)}) was accepted although ${b.holder} had been granted it at ${ms(b.grant.answer)}, after ${a.holder}'s grant (${ms(a.grant.answer)})`;
}

export interface Reclaim {
  subject: string;
  crashed: Hold;
  /** The next grant of the subject, or undefined when the run ended first. */
  next: Hold | undefined;
  /** next grant answered − latest expiry of the crashed lease, ms. */
  ms: number | undefined;
}

export class LeaseJudge {
  readonly violations: Violation[] = [];
  /** The first reclaims, with their holds (for the report). */
  readonly reclaims: Reclaim[] = [];
  /** Every reclaim time, ms. */
  readonly reclaimTimes: number[] = [];
  /** Crashed holds whose subject nobody was granted again before the run ended. */
  unreclaimed = 0;
  /** Violations are kept up to this many (the count goes on). */
  duplicateCount = 0;
  lateAcceptedCount = 0;
  private readonly open = new Map<string, Hold[]>();
  private readonly crashed = new Map<string, Array<{ hold: Hold; next: Hold | undefined }>>();
  private readonly lows = new Map<number, number>();
  private readonly lateFlagged = new WeakSet<Hold>();

  constructor(
    private readonly threads: number,
    /** The run's start: times in the explanations are counted from it. */
    private readonly origin = 0,
    private readonly keep = 100,
  ) {}

  add(hold: Hold): void {
    const list = this.open.get(hold.subject);
    for (const other of list ?? []) {
      if (provablyOverlap(other, hold)) this.flag('duplicate', other.grant.answer <= hold.grant.answer ? [other, hold] : [hold, other], explainOverlap(other, hold, this.origin));
      if (endAcceptedAfterRegrant(other, hold)) this.late(other, hold);
      if (endAcceptedAfterRegrant(hold, other)) this.late(hold, other);
    }
    if (list) list.push(hold);
    else this.open.set(hold.subject, [hold]);
    for (const pending of this.crashed.get(hold.subject) ?? []) {
      if (hold.holder !== pending.hold.holder && hold.grant.answer > pending.hold.grant.answer && (!pending.next || hold.grant.answer < pending.next.grant.answer)) pending.next = hold;
    }
    if (hold.crashedAt !== undefined) {
      const pending = { hold, next: undefined as Hold | undefined };
      // A later grant may have arrived before the crashed hold did.
      for (const other of list ?? []) {
        if (other.holder !== hold.holder && other.grant.answer > hold.grant.answer && (!pending.next || other.grant.answer < pending.next.grant.answer)) pending.next = other;
      }
      const crashes = this.crashed.get(hold.subject);
      if (crashes) crashes.push(pending);
      else this.crashed.set(hold.subject, [pending]);
    }
  }

  /** A thread's low-water mark: every hold it reports from now on was granted at or after `low`. */
  low(thread: number, low: number): void {
    this.lows.set(thread, low);
    if (this.lows.size < this.threads) return;
    const mark = Math.min(...this.lows.values());
    for (const [subject, list] of this.open) {
      const kept = list.filter((h) => Math.max(h.grant.answer, provenUntil(h), endedOk(h) ? h.end!.send : 0) > mark);
      if (kept.length === 0) this.open.delete(subject);
      else if (kept.length !== list.length) this.open.set(subject, kept);
    }
    this.settleReclaims((p) => p.next !== undefined && p.next.grant.answer <= mark);
  }

  /** After the last batch: every crashed hold still waiting has its answer. */
  finish(): void {
    this.settleReclaims(() => true);
  }

  /** Holds the judge still keeps (for the memory bound). */
  get kept(): number {
    let n = 0;
    for (const list of this.open.values()) n += list.length;
    return n;
  }

  get violationCount(): number {
    return this.duplicateCount + this.lateAcceptedCount;
  }

  private settleReclaims(settled: (p: { hold: Hold; next: Hold | undefined }) => boolean): void {
    for (const [subject, list] of this.crashed) {
      const waiting = list.filter((p) => {
        if (!settled(p)) return true;
        const ms = p.next ? p.next.grant.answer - latestExpiry(p.hold) : undefined;
        if (ms === undefined) this.unreclaimed++;
        else this.reclaimTimes.push(ms);
        if (this.reclaims.length < this.keep * 10) this.reclaims.push({ subject, crashed: p.hold, next: p.next, ms });
        return false;
      });
      if (waiting.length === 0) this.crashed.delete(subject);
      else this.crashed.set(subject, waiting);
    }
  }

  /** A late end is counted once, with the first re-grant found as its evidence. */
  private late(ended: Hold, regranted: Hold): void {
    if (this.lateFlagged.has(ended)) return;
    this.lateFlagged.add(ended);
    this.flag('late end accepted', [ended, regranted], explainLate(ended, regranted, this.origin));
  }

  private flag(kind: Violation['kind'], holds: [Hold, Hold], why: string): void {
    if (kind === 'duplicate') this.duplicateCount++;
    else this.lateAcceptedCount++;
    if (this.violations.length < this.keep) this.violations.push({ kind, subject: holds[0].subject, holds, why });
  }
}
