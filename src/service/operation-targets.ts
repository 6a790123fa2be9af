// Which monitor each operation touches, read from its input: the one table both the
// refusal record (operations.ts) and a cluster node's catch-up before it runs (src/cluster) use.

/** Where an operation's input names what it touches. */
export interface OperationTarget {
  /**
   * The monitor: named by the input's `id` or `monitor` field; `every` when it reads them all;
   * `monitor-or-every` when it names one or, without that field, reads them all.
   */
  readonly monitor?: 'id' | 'monitor' | 'every' | 'monitor-or-every';
  /** A subscription (and so its monitor), named by the input's `subscription` field. */
  readonly subscription?: true;
  /** A refusal of this write is recorded on the monitor it touched. */
  readonly recordsRefusal?: true;
}

const monitorById = { monitor: 'id' } as const;
const monitorByIdWrite = { monitor: 'id', recordsRefusal: true } as const;
const subscriptionRead = { subscription: true } as const;
const subscriptionWrite = { subscription: true, recordsRefusal: true } as const;

export const operationTargets = {
  'monitors/discover': monitorById,
  'monitors/list': { monitor: 'every' },
  'monitors/get': monitorById,
  'monitors/create': monitorById,
  'monitors/update': monitorByIdWrite,
  'monitors/pause': monitorByIdWrite,
  'monitors/resume': monitorByIdWrite,
  'monitors/retire': monitorByIdWrite,
  'monitors/state': monitorById,
  'monitors/publish': monitorByIdWrite,
  'feeds/subscribe': { monitor: 'monitor', recordsRefusal: true },
  'feeds/pull': subscriptionRead,
  /** An event stream (the SSE door), opened on a subscription. */
  'feeds/stream': subscriptionRead,
  'feeds/ack': subscriptionWrite,
  'feeds/seek': subscriptionWrite,
  'feeds/renew': subscriptionWrite,
  'feeds/retire': subscriptionWrite,
  'leases/claim': subscriptionWrite,
  'leases/renew': subscriptionWrite,
  'leases/complete': subscriptionWrite,
  'leases/release': subscriptionWrite,
  'leases/reject': subscriptionWrite,
  'admin/snapshot': { monitor: 'every' },
  'admin/compact': { monitor: 'monitor-or-every' },
} as const satisfies Record<string, OperationTarget>;

export type TargetedOperation = keyof typeof operationTargets;

/** What one call touches: every monitor, or the monitor and subscription its input names (either may be absent or not a string). */
export type Touched = { readonly every: true } | { readonly every?: false; readonly monitor?: unknown; readonly subscription?: unknown };

export function touchedBy(operation: TargetedOperation, input: unknown): Touched {
  const fields = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
  const target: OperationTarget = operationTargets[operation];
  if (target.monitor === 'every' || (target.monitor === 'monitor-or-every' && typeof fields.monitor !== 'string')) return { every: true };
  if (target.monitor === 'id') return { monitor: fields.id };
  if (target.monitor === 'monitor' || target.monitor === 'monitor-or-every') return { monitor: fields.monitor };
  return { subscription: fields.subscription };
}

/** Whether a refusal of this operation is recorded on the monitor it touched. */
export function recordsRefusal(operation: TargetedOperation): boolean {
  const target: OperationTarget = operationTargets[operation];
  return target.recordsRefusal === true;
}
