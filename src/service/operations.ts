// Every operation of the protocol, by its JSON-RPC method name. Doors map
// their routes, methods and tools onto this table and call `invoke`.
import { isClusterConflict } from '../store/cluster-conflict.ts';
import { asProtocolError, ProtocolError } from '../protocol/errors.ts';
import type { Caller } from './access.ts';
import { isOwner } from './access.ts';
import { compact, snapshot } from './admin-operations.ts';
import { hasClientGone } from './client-gone.ts';
import {
  claim,
  completeLease,
  rejectLease,
  releaseLease,
  renewLease,
} from './lease-operations.ts';
import {
  configureMonitor,
  createMonitor,
  discover,
  getMonitor,
  listMonitors,
  monitorState,
  publish,
} from './monitor-operations.ts';
import { recordsRefusal, touchedBy } from './operation-targets.ts';
import { type Reply, renderReply } from './reply.ts';
import type { MonitorService } from './service.ts';
import { ack, pull, renew, retire, seek, subscribe } from './subscription-operations.ts';
import { tokenMatches } from './tokens.ts';

export interface InvokeOptions {
  readonly caller: Caller;
  /** Aborted when the client goes away (ends a waiting pull). */
  readonly signal?: AbortSignal;
  /** Whether the client has gone, asked before a write runs; without it, `signal.aborted`. */
  clientGone?(): boolean;
  /** The request body as the client sent it, for recording a refusal. */
  readonly raw?: () => unknown;
  /** Query-string filters carry lists as comma-separated text. */
  readonly splitCommas?: boolean;
  /** A smaller page budget than the default (a JSON-RPC batch near its reply limit). */
  readonly maxPageBytes?: number;
}

type Run = (service: MonitorService, input: unknown, options: InvokeOptions) => Reply | Promise<Reply>;

interface Operation {
  readonly run: Run;
}

const simple =
  (fn: (service: MonitorService, input: unknown, caller: Caller) => Reply | Promise<Reply>): Run =>
  (service, input, options) =>
    fn(service, input, options.caller);

export const operations = {
  'monitors/discover': { run: (service) => discover(service) },
  'monitors/list': { run: (service, _input, o) => listMonitors(service, o.caller) },
  'monitors/get': { run: simple(getMonitor) },
  'monitors/create': { run: simple(createMonitor) },
  'monitors/update': { run: simple(configureMonitor('update')) },
  'monitors/pause': { run: simple(configureMonitor('pause')) },
  'monitors/resume': { run: simple(configureMonitor('resume')) },
  'monitors/retire': { run: simple(configureMonitor('retire')) },
  'monitors/state': { run: simple(monitorState) },
  'monitors/publish': { run: simple(publish) },
  'feeds/subscribe': { run: simple(subscribe) },
  'feeds/pull': {
    run: (service, input, o) => pull(service, input, o.caller, { signal: o.signal, splitCommas: o.splitCommas, maxPageBytes: o.maxPageBytes }),
  },
  'feeds/ack': { run: simple(ack) },
  'feeds/seek': { run: simple(seek) },
  'feeds/renew': { run: simple(renew) },
  'feeds/retire': { run: simple(retire) },
  'leases/claim': { run: (service, input, o) => claim(service, input, o.caller, o) },
  'leases/renew': { run: simple(renewLease) },
  'leases/complete': { run: simple(completeLease) },
  'leases/release': { run: simple(releaseLease) },
  'leases/reject': { run: simple(rejectLease) },
  'admin/snapshot': { run: simple(snapshot) },
  'admin/compact': { run: simple(compact) },
} satisfies Record<string, Operation>;

export type OperationName = keyof typeof operations;

export function isOperation(name: string): name is OperationName {
  return Object.hasOwn(operations, name);
}

/**
 * Runs one operation. A refused write is recorded on the monitor it targeted
 * (unless that monitor is not visible to the caller), and the reply waits
 * until everything the operation changed is durable.
 */
export function invoke(service: MonitorService, name: OperationName, input: unknown, options: InvokeOptions): Promise<Reply> {
  // Discover answers from the server's own facts: it neither waits for the batch of other requests
  // nor runs again when that batch loses a race (a cluster node answered it 503 while one monitor's
  // batches kept being refused).
  if (name === 'monitors/discover') return Promise.resolve(renderReply(discover(service)));
  if (service.cluster) return service.cluster.run(name, input, () => invokeOnce(service, name, input, options));
  return invokeOnce(service, name, input, options);
}

async function invokeOnce(service: MonitorService, name: OperationName, input: unknown, options: InvokeOptions): Promise<Reply> {
  const operation: Operation = operations[name];
  // Not a create: a cluster node reserves its key just before it runs, with no await between (ClusterNode.run).
  // (`clientGone` first: a transport may make the signal only when it is asked for.)
  if (recordsRefusal(name) && (options.clientGone !== undefined || options.signal !== undefined)) await unlessClientGone(options);
  let reply: Awaited<ReturnType<Operation['run']>>;
  try {
    reply = await operation.run(service, input, options);
  } catch (thrown) {
    // A cluster node lost a race for the monitor: the whole operation runs again (src/cluster).
    if (isClusterConflict(thrown)) throw thrown;
    let error = asProtocolError(thrown, name);
    if (recordsRefusal(name) && !unrecorded.has(error.code)) {
      error = recordRefusal(service, name, input, options, error);
    }
    // The refusal's record goes with the next batch; if that batch lost a race, the operation runs again.
    await service.settle().catch((settleError: unknown) => {
      if (isClusterConflict(settleError)) throw settleError;
    });
    throw error;
  }
  // A lost race runs the operation again. Any other failure to store is answered (503) and never run
  // again: PostgreSQL may have committed the batch before its answer was lost, and running the
  // operation again would store it twice (a later batch's lost race, caught here once, did that).
  await service.settle();
  return renderReply(reply);
}

/**
 * A write whose client has gone is not run (issue 43). A node paused (SIGSTOP, a long GC) with a
 * request in its socket reads, when it resumes, the request and the client's close together: the
 * client gave up long ago and may have retried elsewhere, and this write would act on what came
 * after (a release ending a newer grant). The close is read in the same or the next poll of the
 * event loop, so the write waits that long (two turns) and is dropped if the signal fired; the
 * reply goes nowhere. A cluster node checks again before each attempt after a lost race.
 */
async function unlessClientGone(options: InvokeOptions): Promise<void> {
  if (!hasClientGone(options)) await twoTurns();
  if (hasClientGone(options)) throw new ProtocolError('STORE_UNAVAILABLE', 'The client closed its connection before this change ran; nothing was changed.');
}

// The writes that start in one turn wait on the same two turns: one pair of setImmediates and one
// promise for all of them, instead of two of each per write. A write that starts once the pair's first
// turn has run waits on a pair of its own; one that joins a pair still waits until the sockets were
// polled again after the poll that read its request, which is when its client's close is read at the latest.
let waiting: Promise<void> | undefined;

function twoTurns(): Promise<void> {
  if (!waiting) {
    waiting = new Promise((resolve) => {
      setImmediate(() => {
        waiting = undefined;
        setImmediate(resolve);
      });
    });
  }
  return waiting;
}

/**
 * Refusals that record nothing: unknown targets, a broken store, bugs, rate limits (recording those
 * is the abuse), and take-next finding no work (nothing was refused, §21).
 */
const unrecorded = new Set(['NOT_FOUND', 'STORE_UNAVAILABLE', 'INTERNAL', 'OVER_BUDGET', 'NO_WORK']);

function recordRefusal(
  service: MonitorService,
  name: OperationName,
  input: unknown,
  options: InvokeOptions,
  error: ProtocolError,
): ProtocolError {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return error;
  const target = touchedBy(name, input);
  if (target.every) return error;
  let feed = typeof target.monitor === 'string' ? service.feed(target.monitor) : undefined;
  let actor = 'anonymous';
  if (typeof target.subscription === 'string') {
    const sub = service.system.subscriptions.get(target.subscription)?.getSnapshot().context.subscription;
    if (sub) {
      feed = service.feedByKey(sub.mkey);
      if (tokenMatches(options.caller.bearer, sub.tokenHash)) actor = sub.subscriber;
    }
  }
  if (!feed) return error;
  if (isOwner(feed, options.caller)) actor = feed.definition.owner;
  if (actor === 'anonymous' && !service.clientLimits.mayRecordRefusal(options.caller.address)) {
    service.observations.countRejection(feed);
    return error.with({ rejected_recorded: false });
  }
  const seq = service.observations.recordRejection(feed, error, options.raw ? options.raw() : input, actor);
  return error.with({ rejected_seq: seq });
}
