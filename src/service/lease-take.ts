// Take-next (protocol.md §21): `leases/claim {next: true}` grants the oldest
// subject of the monitor that appeared on an observation matching the
// subscription's filters and is neither held, completed nor dead-lettered;
// `count` takes up to k; none → 404 NO_WORK at once or after `wait` seconds,
// recording nothing. The line comes from take-queue.ts; each grant is a
// plain claim's (the lease actor decides, the fence is the seq of its `lease`
// observation), so the one-holder rule and the audit hold as for named claims.
import { leaseStateOf } from '../machines/lease-machine.ts';
import { ProtocolError } from '../protocol/errors.ts';
import type { Caller } from './access.ts';
import { defaults } from './defaults.ts';
import { grantCold } from './lease-cold.ts';
import { type Applied, checkProvenance, grant, holderOf, iso, leaseActor, type LeaseBody, parse } from './lease-parts.ts';
import type { Reply } from './reply.ts';
import { servedLease } from './served.ts';
import type { MonitorService } from './service.ts';
import { type SubscriptionHandle, standingFilters } from './subscription-handle.ts';
import { availability, type Entry, type TakeQueue } from './take-queue.ts';

/** Rows of the log a request reads before it lets other requests run (a line built after a restart). */
const sliceRows = 4096;

export interface TakeRequest {
  readonly count: number;
  readonly durationSeconds: number;
  readonly onBehalfOf?: string;
  /** Subjects not to hand out in this call (the ones it just released or rejected). */
  readonly skip?: ReadonlySet<string>;
  readonly note?: string | null;
}

export function lineFor(service: MonitorService, handle: SubscriptionHandle): TakeQueue {
  return service.queues.lineOf(handle.feed, standingFilters(handle.feed, handle.record));
}

/**
 * Undefined when the line holds `need` subjects (or all there are) now; otherwise a promise that
 * moves its frontier a slice per turn until it does. The caller then runs again from the start.
 */
export function warmLine(service: MonitorService, line: TakeQueue, need: number): Promise<void> | undefined {
  if (line.warm(need, service.now(), sliceRows)) return undefined;
  return new Promise<void>((resolve) => {
    const step = () => (line.warm(need, service.now(), sliceRows) ? resolve() : setImmediate(step));
    setImmediate(step);
  });
}

/** Grants up to `count` subjects from the line, in this turn (so in the caller's commit). */
export function grantNext(service: MonitorService, handle: SubscriptionHandle, request: TakeRequest): Applied[] {
  const line = lineFor(service, handle);
  const holder = holderOf(handle);
  const now = service.now();
  const grants: Applied[] = [];
  const skipped: Entry[] = [];
  while (grants.length < request.count) {
    const entry = line.pop(now);
    if (!entry) break;
    if (request.skip?.has(entry.subject)) {
      skipped.push(entry);
      continue;
    }
    if (service.leaseRows.changedAsRow(handle.feed.key, entry.subject)) {
      // Most subjects were never leased, or are free: granted as a row, without building an actor (lease-cold.ts).
      // One the line found without a row, and heard no change of since, is not looked up again (a cluster
      // node looks: another node may have written the row).
      const stored = entry.unleased && !service.cluster ? undefined : service.leaseRows.stored(handle.feed.key, entry.subject);
      if (!stored || stored.state === 'free') {
        grants.push(grantCold(service, handle, entry.subject, stored, { holder, durationSeconds: request.durationSeconds, now, onBehalfOf: request.onBehalfOf, queued: entry.seq, note: request.note }));
        continue;
      }
      const standing = availability({ state: stored.state, expiresMs: stored.record.expiresMs }, now);
      if (standing !== 'available') {
        line.place(entry, standing, stored.record.queued ?? null, stored.record.expiresMs);
        continue;
      }
    }
    const actor = leaseActor(service, handle, entry.subject, true)!;
    const snapshot = actor.getSnapshot();
    const lease = snapshot.context.lease;
    const found = availability({ state: leaseStateOf(snapshot.value), expiresMs: lease.expiresMs }, now);
    if (found !== 'available') {
      line.place(entry, found, lease.queued ?? null, lease.expiresMs);
      continue;
    }
    grants.push(grant(service, handle, actor, { holder, durationSeconds: request.durationSeconds, now, onBehalfOf: request.onBehalfOf, queued: entry.seq, note: request.note }));
  }
  for (const entry of skipped) line.place(entry, 'available', null);
  return grants;
}

export const servedGrant = (g: Applied) => servedLease(g.state, g.lease);

export function noWork(handle: SubscriptionHandle, waited: boolean): ProtocolError {
  const after = waited ? ' within the wait' : '';
  return new ProtocolError(
    'NO_WORK',
    `No subject of monitor "${handle.feed.id}" is free to take${after}: every subject that appeared on an observation matching this subscription's filter is held, completed or dead-lettered. Try again later, or send "wait" (up to ${defaults.maxWaitSeconds} s) to wait for one.`,
  );
}

/** When a waiting take gives up, by its request object: a cluster node that runs it again keeps the deadline. */
const deadlines = new WeakMap<object, number>();

/** `leases/claim` with `next: true`. */
export function takeNext(service: MonitorService, input: unknown, caller: Caller, client?: { readonly signal?: AbortSignal }): Reply | Promise<Reply> {
  const { body, handle } = parse('lease-claim', service, input, caller, checkTakeFields);
  checkProvenance(handle, body);
  const count = body.count ?? 1;
  const warming = warmLine(service, lineFor(service, handle), count);
  if (warming) return warming.then(() => takeNext(service, input, caller, client));
  const grants = grantNext(service, handle, { count, durationSeconds: body.lease_duration_seconds ?? defaults.leaseSeconds, onBehalfOf: body.on_behalf_of, note: body.note });
  if (grants.length > 0) {
    deadlines.delete(input as object);
    if (body.count === undefined) {
      const only = grants[0]!;
      return { status: 201, body: { lease: servedGrant(only), expires: iso(only.lease.expiresMs), fence: only.lease.fence ?? null } };
    }
    return { status: 201, body: { leases: grants.map(servedGrant) } };
  }
  const now = service.now();
  let deadline = deadlines.get(input as object);
  if (deadline === undefined) {
    deadline = now + (body.wait ?? 0) * 1000;
    deadlines.set(input as object, deadline);
  }
  // Read only here, when nothing was granted: a transport may make the signal when first asked.
  const signal = client?.signal;
  if (now >= deadline || signal?.aborted || service.isDraining) {
    deadlines.delete(input as object);
    throw noWork(handle, (body.wait ?? 0) > 0);
  }
  return nextCommit(service, handle, deadline - now, signal).then(() => takeNext(service, input, caller, client));
}

/** `next`, `count` and `wait` go together, and `subject` does not go with them. */
function checkTakeFields(body: LeaseBody): void {
  if (body.subject !== undefined) {
    throw new ProtocolError('INVALID', '"subject" and "next": true do not go together: name a subject to claim it, or send "next": true without one to take the oldest free subject.', { field: 'subject' });
  }
}

/** Resolves after the next commit that stored observations on the monitor (a publish, a release, an expiry), or after `ms`. */
function nextCommit(service: MonitorService, handle: SubscriptionHandle, ms: number, signal?: AbortSignal): Promise<void> {
  const feed = handle.feed;
  return new Promise<void>((resolve) => {
    const done = () => {
      service.clock.clearTimeout(timer);
      feed.waiters.delete(waiter);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const waiter = () => {
      done();
      return true;
    };
    const timer = service.clock.setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    feed.waiters.add(waiter);
  });
}
