// Subscription operations (§9): subscribe (and re-key), pull, ack, seek,
// renew and retire.
import { randomBytes } from 'node:crypto';
import { subscriptionStateOf, type SubscriptionEvent } from '../machines/subscription-machine.ts';
import { ProtocolError, invalid, notFound, unauthorized } from '../protocol/errors.ts';
import { assertNarrows, filterKeys, isEmptyFilter, parseFilter } from '../protocol/filter.ts';
import { validate } from '../protocol/validate.ts';
import {
  type Capability,
  type FeedProtocol,
  observationTypes,
  type ResetPolicy,
} from '../protocol/vocabulary.ts';
import type { SubscriptionRecord } from '../store/records.ts';
import { type Caller, canSee, holdsSubscribeToken, isAdmin, isOwner } from './access.ts';
import { readPage } from './feed-reader.ts';
import { defaults } from './defaults.ts';
import type { Reply } from './reply.ts';
import { servedSubscription } from './served.ts';
import type { MonitorService } from './service.ts';
import { lagOf, requireLive, standingFilters, type SubscriptionHandle, startAfterReset, subscriptionFor } from './subscription-handle.ts';
import { mintToken, tokenMatches } from './tokens.ts';

function send(handle: SubscriptionHandle, event: SubscriptionEvent) {
  handle.actor.send(event);
  const snapshot = handle.actor.getSnapshot();
  return { outcome: snapshot.context.outcome!, record: snapshot.context.subscription, state: subscriptionStateOf(snapshot.value) };
}

interface SubscribeBody {
  monitor: string;
  subscriber: string;
  capabilities?: Capability[];
  filter?: Record<string, unknown>;
  from?: 'head' | 'earliest' | number;
  protocol?: FeedProtocol;
  reset_policy?: ResetPolicy;
  retire_after_mute_seconds?: number | null;
}

export function subscribe(service: MonitorService, input: unknown, caller: Caller): Reply {
  const body = validate<SubscribeBody>('subscribe', input);
  const feed = service.feed(body.monitor);
  const existingId = feed ? service.subscriptionIdOf(feed.key, body.subscriber) : undefined;
  const existing = existingId ? service.system.subscriptions.get(existingId) : undefined;
  const oldRecord = existing?.getSnapshot().context.subscription;
  const holdsOldToken = oldRecord !== undefined && tokenMatches(caller.bearer, oldRecord.tokenHash);
  const admin = isAdmin(service, caller);
  if (!feed || (!canSee(feed, caller) && !holdsOldToken && !admin)) throw notFound(`No monitor "${body.monitor}" is visible to this token.`);

  // Only the owner, the subscribe token or the admin may grant beyond default_grant.
  // A subscription's own token may keep or narrow what it holds, never widen it.
  const privileged = isOwner(feed, caller) || holdsSubscribeToken(feed, caller) || admin;
  const grantable = privileged
    ? feed.definition.capabilities
    : holdsOldToken
      ? union(oldRecord.capabilities, feed.definition.default_grant).filter((c) => feed.definition.capabilities.includes(c))
      : feed.definition.default_grant;
  const requested = body.capabilities ?? (holdsOldToken && !privileged ? oldRecord.capabilities : feed.definition.default_grant);
  const missing = requested.filter((c) => !grantable.includes(c));
  if (missing.length > 0) {
    throw new ProtocolError('CAPABILITY_MISSING', `This token may be granted ${grantable.join(', ') || 'nothing'} on monitor "${feed.id}"; ${missing.join(', ')} ${missing.length > 1 ? 'need' : 'needs'} the owner, subscribe or admin token${privileged ? ' and a monitor that offers it' : ''}.`, {
      granted: grantable,
      monitor_capabilities: feed.definition.capabilities,
    });
  }
  const filter = parseFilter(body.filter ?? {}, { knownTypes: () => feed.knownTypes() });
  const muteSeconds = body.retire_after_mute_seconds ?? feed.definition.retire_after_mute_seconds ?? service.options.retireAfterMuteSeconds;
  const token = mintToken('subscription');
  const now = service.now();

  if (existing && existingId) {
    if (!holdsOldToken && !isOwner(feed, caller) && !admin) {
      throw unauthorized(`Subscriber "${body.subscriber}" already has a subscription on "${feed.id}"; re-keying it needs its current token, the owner token or the admin token.`);
    }
    const wasLive = subscriptionStateOf(existing.getSnapshot().value) === 'live';
    existing.send({
      type: 'REKEY',
      tokenHash: token.hash,
      now,
      settings: {
        capabilities: requested,
        filter,
        muteMs: muteSeconds * 1000,
        ...(body.protocol ? { protocol: body.protocol } : {}),
        ...(body.reset_policy ? { reset_policy: body.reset_policy } : {}),
        ...(body.retire_after_mute_seconds !== undefined ? { retire_after_mute_seconds: body.retire_after_mute_seconds } : {}),
      },
    });
    if (!wasLive) feed.liveSubscriptions++;
    const record = existing.getSnapshot().context.subscription;
    service.subscriptionRows.persist(existingId);
    service.observations.recordBookkeeping(feed, observationTypes.subscribed, body.subscriber, {
      action: 'resubscribe',
      subscription: existingId,
      subscriber: body.subscriber,
      cursor: record.cursor,
      capabilities: record.capabilities,
    });
    return { status: 201, body: () => ({ subscription: servedSubscription('live', record, lagOf(service, feed, record)), token: token.token }) };
  }

  if (!privileged) service.clientLimits.admitSubscribe(caller.address);
  const head = feed.committedHead;
  if (typeof body.from === 'number' && body.from > head + 1) {
    throw invalid(`"from" may be at most head + 1 (${head + 1}); got ${body.from}.`, { field: 'from', head });
  }
  const id = `sub-${randomBytes(6).toString('hex')}`;
  // Recorded first, so that "from": "head" starts after the subscription's own record.
  const subscribedSeq = service.observations.recordBookkeeping(feed, observationTypes.subscribed, body.subscriber, {
    action: 'subscribe',
    subscription: id,
    subscriber: body.subscriber,
    capabilities: requested,
  });
  const cursor =
    body.from === 'head' ? subscribedSeq + 1 : typeof body.from === 'number' ? body.from : feed.stats.retention_floor;

  const record: SubscriptionRecord = {
    id,
    monitor: feed.id,
    mkey: feed.key,
    subscriber: body.subscriber,
    capabilities: requested,
    protocol: body.protocol ?? 'pull',
    filter,
    reset_policy: body.reset_policy ?? 'none',
    retire_after_mute_seconds: body.retire_after_mute_seconds ?? null,
    created: new Date(now).toISOString(),
    last_pull: null,
    tokenHash: token.hash,
    cursor,
    maxShown: 0,
    muteMs: muteSeconds * 1000,
    lastActivityMs: now,
  };
  service.addSubscription({ state: 'live', record });
  feed.liveSubscriptions++;
  return { status: 201, body: () => ({ subscription: servedSubscription('live', record, lagOf(service, feed, record)), token: token.token }) };
}

const union = <T>(a: readonly T[], b: readonly T[]): T[] => [...new Set([...a, ...b])];

const pullParams = new Set(['subscription', 'wait', 'limit', 'cursor', 'filter']);

export interface PullInput {
  subscription: string;
  wait?: number;
  limit?: number;
  cursor?: number;
  /** Filter keys as one object (the base protocol's `filter`), beside or instead of keys at the top level. */
  filter?: Record<string, unknown>;
}

/** The inline filter of a pull: its `filter` object and the filter keys beside it, each key given once. */
function inlineFilterOf(params: PullInput & Record<string, unknown>): Record<string, unknown> {
  const beside = Object.fromEntries(Object.entries(params).filter(([k]) => !pullParams.has(k)));
  const nested = params.filter ?? {};
  const twice = Object.keys(nested).filter((k) => Object.hasOwn(beside, k));
  if (twice.length > 0) {
    throw new ProtocolError('INVALID_FILTER', `Filter key "${twice[0]}" is given both inside "filter" and beside it; give each key once.`, { invalid: twice, known_keys: filterKeys });
  }
  return { ...beside, ...nested };
}

export async function pull(
  service: MonitorService,
  input: unknown,
  caller: Caller,
  options: { signal?: AbortSignal; splitCommas?: boolean; maxPageBytes?: number } = {},
): Promise<Reply> {
  if (typeof (input as { filter?: unknown } | null)?.filter === 'string') {
    throw invalid('"filter" takes an object of filter keys, e.g. {"types": ["build.failed"]}; in a query string give each key as a parameter instead (?types=build.failed).', { field: 'filter' });
  }
  const params = validate<PullInput & Record<string, unknown>>('pull', input);
  const inlineRaw = inlineFilterOf(params);
  const handle = subscriptionFor(service, params.subscription, caller);
  requireLive(handle);
  const { feed, record } = handle;
  const ctx = { knownTypes: () => feed.knownTypes(), splitCommas: options.splitCommas ?? false };
  const inline = parseFilter(inlineRaw, ctx);
  assertNarrows(record.filter, inline, ctx);
  const filters = [...standingFilters(feed, record), inline].filter((f) => !isEmptyFilter(f));

  const start = startAfterReset(service, handle, params.cursor ?? record.cursor, params.cursor !== undefined);

  // A waiting pull keeps its actor resident, so the activity it records lands on the live actor.
  const release = service.system.subscriptions.hold(handle.id);
  let page: Awaited<ReturnType<typeof readPage>>;
  try {
    page = await readPage(service, feed, {
      from: Math.max(start, 1),
      limit: params.limit ?? 50,
      waitMs: (params.wait ?? 0) * 1000,
      filters,
      signal: options.signal,
      maxShown: record.maxShown,
      maxBytes: options.maxPageBytes ?? defaults.maxPageBytes,
    });
  } finally {
    release();
  }
  const now = service.now();
  const after = send(handle, { type: 'ACTIVITY', now, shownUpTo: page.lastSeq ?? 0 });
  feed.stats.last_pull = new Date(now).toISOString();
  service.subscriptionRows.persist(handle.id);
  service.persistMonitor(feed);
  return {
    status: 200,
    body: {
      subscription: handle.id,
      monitor: feed.id,
      cursor: after.record.cursor,
      head: page.head,
      lag: lagOf(service, feed, after.record),
      retention_floor: feed.stats.retention_floor,
      next: page.next,
      redelivered: page.redelivered,
      observations: page.observations,
    },
  };
}

export function ack(service: MonitorService, input: unknown, caller: Caller): Reply {
  const body = validate<{ subscription: string; cursor: number }>('ack', input);
  const handle = subscriptionFor(service, body.subscription, caller);
  requireLive(handle);
  const { feed } = handle;
  const before = handle.record.cursor;
  const head = feed.committedHead;
  const { outcome, record, state } = send(handle, { type: 'ACK', cursor: body.cursor, head, now: service.now() });
  if (!outcome.ok) {
    if (outcome.code === 'CURSOR_BACKWARDS') {
      throw new ProtocolError('CURSOR_BACKWARDS', `Cursor ${body.cursor} is below the committed cursor ${outcome.cursor}; an acknowledgement never moves back (use seek to move it on purpose).`, {
        cursor: outcome.cursor,
      });
    }
    throw invalid(`"cursor" may be at most head + 1 (${head + 1}); got ${body.cursor}.`, { field: 'cursor', head });
  }
  if (outcome.changed) {
    feed.stats.delivered += Math.max(0, record.cursor - Math.max(before, feed.stats.retention_floor, 1));
    service.persistMonitor(feed);
  }
  service.subscriptionRows.persist(handle.id);
  // The base protocol's reply is {cursor, head, lag}; the subscription goes with them.
  return {
    status: 200,
    body: () => {
      const lag = lagOf(service, feed, record);
      return { subscription: servedSubscription(state, record, lag), cursor: record.cursor, head: feed.committedHead, lag };
    },
  };
}

export function seek(service: MonitorService, input: unknown, caller: Caller): Reply {
  const body = validate<{ subscription: string; cursor: number; reason: string }>('seek', input);
  const handle = subscriptionFor(service, body.subscription, caller);
  requireLive(handle);
  const { feed } = handle;
  const head = feed.committedHead;
  const previous = handle.record.cursor;
  const { outcome, record, state } = send(handle, { type: 'SEEK', cursor: body.cursor, head, now: service.now() });
  if (!outcome.ok) throw invalid(`"cursor" may be at most head + 1 (${head + 1}); got ${body.cursor}.`, { field: 'cursor', head });
  service.subscriptionRows.persist(handle.id);
  const seq = service.observations.recordBookkeeping(feed, observationTypes.subscribed, record.subscriber, {
    action: 'seek',
    subscription: handle.id,
    subscriber: record.subscriber,
    reason: body.reason,
    cursor: record.cursor,
    previous,
  });
  return { status: 200, body: () => ({ subscription: servedSubscription(state, record, lagOf(service, feed, record)), cursor: record.cursor, seq }) };
}

export function renew(service: MonitorService, input: unknown, caller: Caller): Reply {
  const body = validate<{ subscription: string }>('subscription-ref', input);
  const handle = subscriptionFor(service, body.subscription, caller);
  requireLive(handle);
  const token = mintToken('subscription');
  const { record, state } = send(handle, { type: 'RENEW', tokenHash: token.hash, now: service.now() });
  service.subscriptionRows.persist(handle.id);
  return { status: 200, body: () => ({ subscription: servedSubscription(state, record, lagOf(service, handle.feed, record)), token: token.token }) };
}

export function retire(service: MonitorService, input: unknown, caller: Caller): Reply {
  const body = validate<{ subscription: string; reason?: string | null }>('subscription-ref', input);
  const handle = subscriptionFor(service, body.subscription, caller);
  const { outcome, record, state } = send(handle, { type: 'RETIRE', now: service.now() });
  let seq: number | null = null;
  if (outcome.ok && outcome.changed) {
    handle.feed.liveSubscriptions = Math.max(0, handle.feed.liveSubscriptions - 1);
    service.subscriptionRows.persist(handle.id);
    seq = service.observations.recordBookkeeping(handle.feed, observationTypes.subscriptionRetired, record.subscriber, {
      subscription: handle.id,
      subscriber: record.subscriber,
      reason: body.reason ?? 'request',
      cursor: record.cursor,
    });
  }
  return {
    status: 200,
    body: () => ({ ok: true, subscription: servedSubscription(state, record, lagOf(service, handle.feed, record)), seq, cursor_kept: record.cursor }),
  };
}
