// One lease client of `vigil bench leases`: claims a subject (named: drawn
// with the run's skew; next: whatever the server hands out), holds it for the
// drawn time (renewing on the cadence while the hold outlasts it), and ends it
// with a complete, release or reject — or dies holding it (--crash), or stops
// renewing and ends it past its lease as a paused worker does (--stall).
// Every request is written down on the client's own clock (lease-records.ts).
import { nowMs } from './clock.ts';
import { sleep } from '../timing/sleep.ts';
import type { Hold, LeaseOp, OpRecord } from './lease-records.ts';
import { generator, type Sampler } from './random.ts';
import type { Subscription } from './setup.ts';
import type { LeaseSpec } from './spec.ts';
import type { Wire, WireReply } from './wire.ts';

/** What the clients of one thread share. */
export interface ClientContext {
  readonly wire: Wire;
  readonly spec: Pick<LeaseSpec, 'mode' | 'subjects' | 'hold' | 'leaseSeconds' | 'renewMs' | 'crash' | 'stall' | 'release' | 'reject' | 'seed'>;
  readonly monitor: string;
  readonly ownerToken: string;
  /** Send `fence` on renew, complete, release and reject (the server lists leases.fence). */
  readonly fence: boolean;
  readonly sampler: Sampler | undefined;
  readonly stop: AbortSignal;
  /** Counts an accepted end; returns whether the run's --cycles are reached. */
  ended(op: LeaseOp): void;
  /** next mode: every subject of the backlog was completed. */
  drained(): boolean;
  /** Writes a request down (latency, outcome, refusal series), with the node (its index in --base) it went to. */
  note(record: OpRecord, node: number): void;
  /** Hands a finished hold over. */
  finished(hold: Hold): void;
  /** Holds granted and not yet finished, for the thread's low-water mark. */
  readonly holding: Set<Hold>;
}

export const subjectName = (mode: 'named' | 'next', i: number): string => (mode === 'named' ? `s${i}` : `job-${i}`);

export class LeaseClient {
  private readonly random: () => number;
  private incarnation = 0;
  /** next mode: the server refused `wait` on claim; sleep between empty answers instead. */
  private noWait = false;

  constructor(
    private readonly ctx: ClientContext,
    readonly index: number,
    private readonly root: string,
    /** The root's index in --base. */
    private readonly node: number,
    private sub: Subscription,
  ) {
    this.random = generator(ctx.spec.seed, index);
  }

  async run(): Promise<void> {
    const { ctx } = this;
    let hold: Hold | undefined;
    while (!ctx.stop.aborted) {
      hold ??= await this.claim();
      if (!hold) continue;
      hold = await this.hold(hold);
    }
  }

  private async send(op: LeaseOp, body: Record<string, unknown>): Promise<{ reply: WireReply; record: OpRecord }> {
    const path = `/subscriptions/${encodeURIComponent(this.sub.id)}/leases/${op}`;
    const send = nowMs();
    const reply = await this.ctx.wire.request(this.root, 'POST', path, body, this.sub.token);
    const record: OpRecord = { op, send, answer: nowMs(), status: reply.status };
    if (reply.code !== undefined) record.code = reply.code;
    // A take-next claim is told apart by the mode; `next` marks an end that also took the next subject.
    if (body.next === true && op !== 'claim') record.next = true;
    this.ctx.note(record, this.node);
    return { reply, record };
  }

  private async claim(): Promise<Hold | undefined> {
    const { ctx } = this;
    const body: Record<string, unknown> = { lease_duration_seconds: ctx.spec.leaseSeconds };
    if (ctx.spec.mode === 'named') body.subject = subjectName('named', ctx.sampler!(this.random(), this.random()));
    else {
      body.next = true;
      if (!this.noWait) body.wait = 1;
    }
    const { reply, record } = await this.send('claim', body);
    if (reply.status === 200 || reply.status === 201) return this.granted(reply, record, body.subject as string | undefined);
    if (ctx.spec.mode === 'next') {
      if (reply.status === 400 && JSON.stringify(reply.body ?? '').includes('wait')) this.noWait = true;
      if (reply.code === 'NO_WORK' && ctx.drained()) return undefined;
      if (reply.code === 'NO_WORK' && this.noWait) await sleep(100, ctx.stop);
    }
    // A request that got no answer at all: do not hammer a server that is down.
    if (reply.status === 0 || reply.status >= 500) await sleep(100, ctx.stop);
    return undefined;
  }

  private granted(reply: WireReply, record: OpRecord, named: string | undefined): Hold | undefined {
    const lease = reply.body?.lease;
    const subject = named ?? (typeof lease?.subject === 'string' ? lease.subject : undefined);
    if (subject === undefined) return undefined;
    const fence = reply.body?.fence ?? lease?.fence;
    const hold: Hold = {
      client: this.index,
      holder: this.sub.id,
      subject,
      durationMs: this.ctx.spec.leaseSeconds * 1000,
      grant: record,
      fence: typeof fence === 'number' ? fence : null,
      renews: [],
      validSend: record.send,
      validAnswer: record.answer,
    };
    this.ctx.holding.add(hold);
    return hold;
  }

  /** Holds, then ends (or abandons) the hold; returns the next hold when the end also granted one. */
  private async hold(hold: Hold): Promise<Hold | undefined> {
    const { ctx } = this;
    const { hold: range, crash, stall, renewMs } = ctx.spec;
    const holdMs = range.minMs + this.random() * (range.maxMs - range.minMs);
    const fate = this.random();
    const crashes = fate < crash;
    const stalls = !crashes && fate < crash + stall;
    const crashAt = crashes ? hold.grant.answer + this.random() * holdMs : Number.POSITIVE_INFINITY;
    // A stalled holder sleeps until well past its lease, then ends it as if nothing happened.
    const until = hold.grant.answer + (stalls ? Math.max(holdMs, hold.durationMs + 250 + this.random() * 250) : holdMs);
    if (stalls) hold.stalled = true;
    for (;;) {
      const now = nowMs();
      if (ctx.stop.aborted) {
        // Cut short by the run's end while its lease still holds: it ends within its lease, and is not
        // counted a stall. One already past its lease ends as a stall (its end is refused LEASE_LOST).
        if (stalls && now < hold.validSend + hold.durationMs) hold.stalled = false;
        break;
      }
      if (now >= crashAt) return this.crash(hold, now);
      if (now >= until) break;
      const renewAt = stalls ? Number.POSITIVE_INFINITY : hold.validSend + renewMs;
      if (now >= renewAt) {
        if (!(await this.renew(hold))) return undefined;
        continue;
      }
      await sleep(Math.min(until, renewAt, crashAt) - now, ctx.stop);
    }
    return this.end(hold);
  }

  private async renew(hold: Hold): Promise<boolean> {
    const body: Record<string, unknown> = { subject: hold.subject, lease_duration_seconds: this.ctx.spec.leaseSeconds };
    if (this.ctx.fence && hold.fence !== null) body.fence = hold.fence;
    const { record } = await this.send('renew', body);
    hold.renews.push(record);
    if (record.status === 200) {
      hold.validSend = record.send;
      hold.validAnswer = record.answer;
      return true;
    }
    // Refused or unanswered: the client cannot know it still holds the lease, and gives it up.
    hold.lost = true;
    this.finish(hold);
    return false;
  }

  private async end(hold: Hold): Promise<Hold | undefined> {
    const { ctx } = this;
    const draw = this.random();
    const op: LeaseOp = draw < ctx.spec.release ? 'release' : draw < ctx.spec.release + ctx.spec.reject ? 'reject' : 'complete';
    const body: Record<string, unknown> = { subject: hold.subject };
    if (ctx.fence && hold.fence !== null) body.fence = hold.fence;
    if (op === 'complete') body.outcome = 'ok';
    else body.reason = 'vigil bench';
    const takeNext = ctx.spec.mode === 'next' && !ctx.stop.aborted;
    if (takeNext) body.next = true;
    const { reply, record } = await this.send(op, body);
    hold.end = record;
    this.finish(hold);
    if (record.status >= 200 && record.status < 300) {
      ctx.ended(op);
      const next = takeNext ? reply.body?.next : undefined;
      if (next && typeof next === 'object' && typeof next.subject === 'string') {
        return this.granted({ status: record.status, body: { lease: next, fence: next.fence }, code: undefined }, record, next.subject);
      }
    }
    return undefined;
  }

  /** Dies holding the lease, and comes back as a new worker: a new subscription, a new holder. */
  private async crash(hold: Hold, at: number): Promise<undefined> {
    hold.crashedAt = at;
    this.finish(hold);
    const { ctx } = this;
    while (!ctx.stop.aborted) {
      this.incarnation++;
      const subscriber = `agent:bench-c${this.index}-r${this.incarnation}`;
      const send = nowMs();
      const reply = await ctx.wire.request(this.root, 'POST', '/subscriptions', { monitor: ctx.monitor, subscriber, capabilities: ['observe', 'act'], from: 'head' }, ctx.ownerToken);
      const record: OpRecord = { op: 'subscribe', send, answer: nowMs(), status: reply.status };
      if (reply.code !== undefined) record.code = reply.code;
      ctx.note(record, this.node);
      if (reply.status === 201 && typeof reply.body?.token === 'string') {
        this.sub = { id: reply.body.subscription?.id ?? reply.body.id, token: reply.body.token };
        return undefined;
      }
      await sleep(200, ctx.stop);
    }
    return undefined;
  }

  private finish(hold: Hold): void {
    this.ctx.holding.delete(hold);
    this.ctx.finished(hold);
  }
}
