// The cloud API's API keys, webhook registrations, deliveries and managed-edge
// workers, read and written asynchronously: from the server's own SQLite store
// on one node (cloud-store.ts), from PostgreSQL on a cluster node
// (pg-cloud-rows.ts), so that every node serves every key and every worker,
// and a restart loses nothing.
import type { ApiKeyTable, CloudStore, DeliveryTable, EventBodyTable, WebhookTable, WorkerTable } from './cloud-store.ts';

/** The managed edge's workers (edge/managed-edge.ts). */
export interface WorkerRows {
  /**
   * Stores the worker; false, storing nothing, when the name is another key's
   * (on PostgreSQL, where another node may have taken it since it was read).
   */
  putWorker(row: WorkerTable): Promise<boolean>;
  worker(name: string): Promise<WorkerTable | undefined>;
  /** The row's version alone (a primary-key read, made before each use of a running worker on a cluster). */
  workerVersion(name: string): Promise<string | undefined>;
  workersOf(keyId: string): Promise<WorkerTable[]>;
  /** Every key's workers (the admin's view). */
  allWorkers(): Promise<WorkerTable[]>;
  /** Every worker's name and cron patterns (JSON). */
  workerCrons(): Promise<Pick<WorkerTable, 'name' | 'crons'>[]>;
  deleteWorker(name: string): Promise<void>;
  /** Takes the run of `cron` due at `dueMs` for this node; false when another node took it. */
  claimCronRun(name: string, cron: string, dueMs: number): Promise<boolean>;
  /** Forgets the claims of runs due before `beforeMs`. */
  pruneCronRuns(beforeMs: number): Promise<void>;
}

export interface CloudRows extends WorkerRows {
  /** Several nodes share the rows: pending deliveries are polled for and claimed before each attempt. */
  readonly shared: boolean;
  /** Resolves when every write made so far is durable. */
  settled(): Promise<void>;
  putKey(row: ApiKeyTable): Promise<void>;
  keyByHash(hash: string): Promise<ApiKeyTable | undefined>;
  keyById(id: string): Promise<ApiKeyTable | undefined>;
  keys(): Promise<ApiKeyTable[]>;
  putWebhook(row: WebhookTable): Promise<void>;
  webhook(id: string): Promise<WebhookTable | undefined>;
  webhooksOf(keyId: string): Promise<WebhookTable[]>;
  subscribers(keyId: string, event: string): Promise<WebhookTable[]>;
  /** Active registrations of `event` under every key. */
  allSubscribers(event: string): Promise<WebhookTable[]>;
  /** Every key's registrations, active or not (the admin's view). */
  allWebhooks(): Promise<WebhookTable[]>;
  deleteWebhook(id: string): Promise<void>;
  putDelivery(row: DeliveryTable): Promise<void>;
  deliveriesOf(webhookId: string, limit: number): Promise<DeliveryTable[]>;
  pruneDeliveries(beforeIso: string): Promise<void>;
  putBody(row: EventBodyTable): Promise<void>;
  body(id: string): Promise<EventBodyTable | undefined>;
  deleteBody(id: string): Promise<void>;
  /** Forgets bodies made before `beforeIso` that no pending delivery sends any more. */
  pruneBodies(beforeIso: string): Promise<void>;
  /** Forgets the body when no pending delivery sends it any more. */
  deleteBodyIfSent(id: string): Promise<void>;
  /** Bytes `keyId`'s pending deliveries still send: each counts its body's size. */
  queuedBodyBytes(keyId: string): Promise<number>;
  /** Pending deliveries, those due before `dueBeforeMs` when given. */
  pendingDeliveries(dueBeforeMs?: number): Promise<DeliveryTable[]>;
  /**
   * Takes a pending delivery for one attempt: moves its next attempt from `expectedMs` to `untilMs`,
   * so that no other node attempts it meanwhile. False when another node took it first.
   */
  claimDelivery(id: string, expectedMs: number | null, untilMs: number): Promise<boolean>;
}

/**
 * The rows in the server's own SQLite store (one node: nothing to claim, no other writer of a worker). Each write is queued on the
 * store's group commit when called, in the caller's turn, as the synchronous store does.
 */
export function localRows(store: CloudStore): CloudRows {
  return {
    shared: false,
    settled: () => store.settled(),
    putKey: async (row) => store.putKey(row),
    keyByHash: async (hash) => store.keyByHash(hash),
    keyById: async (id) => store.keyById(id),
    keys: async () => store.keys(),
    putWebhook: async (row) => store.putWebhook(row),
    webhook: async (id) => store.webhook(id),
    webhooksOf: async (keyId) => store.webhooksOf(keyId),
    subscribers: async (keyId, event) => store.subscribers(keyId, event),
    allSubscribers: async (event) => store.allSubscribers(event),
    allWebhooks: async () => store.allWebhooks(),
    deleteWebhook: async (id) => store.deleteWebhook(id),
    putDelivery: async (row) => store.putDelivery(row),
    deliveriesOf: async (webhookId, limit) => store.deliveriesOf(webhookId, limit),
    pruneDeliveries: async (beforeIso) => store.pruneDeliveries(beforeIso),
    putBody: async (row) => store.putBody(row),
    body: async (id) => store.body(id),
    deleteBody: async (id) => store.deleteBody(id),
    pruneBodies: async (beforeIso) => store.pruneBodies(beforeIso),
    deleteBodyIfSent: async (id) => store.deleteBodyIfSent(id),
    queuedBodyBytes: async (keyId) => store.queuedBodyBytes(keyId),
    pendingDeliveries: async (dueBeforeMs) =>
      store.pendingDeliveries().filter((row) => dueBeforeMs === undefined || (row.next_attempt_ms ?? 0) < dueBeforeMs),
    claimDelivery: async () => true,
    async putWorker(row) {
      store.putWorker(row);
      return true;
    },
    worker: async (name) => store.worker(name),
    workerVersion: async (name) => store.worker(name)?.version,
    workersOf: async (keyId) => store.workersOf(keyId),
    allWorkers: async () => store.allWorkers(),
    workerCrons: async () => store.allWorkers().map(({ name, crons }) => ({ name, crons })),
    deleteWorker: async (name) => store.deleteWorker(name),
    claimCronRun: async () => true,
    pruneCronRuns: async () => {},
  };
}
