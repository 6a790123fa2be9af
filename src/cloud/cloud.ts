// The cloud API that `vigil serve` hosts (recipes-and-sdk.md §6): API keys,
// signed webhooks with durable retries, inbound triggers and the managed
// edge. It keeps its rows in the server's store and plugs into the HTTP door
// at /v1, behind the browser rules; the edge's workers answer on a port of
// their own (edge/edge-door.ts), never on the API's origin.
import { ProtocolError } from '../protocol/errors.ts';
import type { MonitorService } from '../service/service.ts';
import { bearerOf, jsonResponse } from '../transport/http-door.ts';
import type { HttpRequest, HttpResponse } from '../transport/http-types.ts';
import { type CloudRows, localRows } from './cloud-rows.ts';
import { CloudStore } from './cloud-store.ts';
import { answerCloud, type CloudParts, type CloudRoute, webhookRoutes } from './cloud-routes.ts';
import { DeliveryQueue, type DeliveryTimers, realTimers } from './delivery-queue.ts';
import { ManagedEdge, workerName } from './edge/managed-edge.ts';
import { defaultWorkerLimits } from './edge/worker-runtimes.ts';
import { edgeCaps, type EdgeLimitSettings } from './edge/edge-limits.ts';
import { DeliverySender } from './signed-delivery.ts';
import { workerRoutes } from './worker-routes.ts';
import { adminRoutes } from './admin-routes.ts';
import { EventRate, type WebhookLimits, webhookLimits } from './webhook-limits.ts';
import { Webhooks } from './webhooks.ts';
import { MonitorFollowers } from './monitor-followers.ts';

export const cloudBasePath = '/v1';
/** Finished deliveries are listed for this long, then forgotten. */
export const deliveryLogDays = 7;

export interface CloudOptions {
  /** Plain http to loopback, and private addresses, become acceptable webhook targets. */
  readonly allowInsecureWebhooks?: boolean;
  /** Workers answer at <name>.<edgeDomain> on the edge port (default localhost). */
  readonly edgeDomain?: string;
  /** The edge's own port (0 or absent: any free port). */
  readonly edgePort?: number;
  /** edgePort is only preferred (the default, not asked for): when it is taken, any free port serves. */
  readonly edgePortPreferred?: boolean;
  readonly timers?: DeliveryTimers;
  /** Per-attempt timeout of a delivery (10 s). */
  readonly deliveryTimeoutMs?: number;
  /** Bytes of event bodies one API key may have waiting for webhook delivery (64 MiB). */
  readonly maxQueuedEventBytes?: number;
  /** How long a managed-edge worker may take over a request or a scheduled run (30 s). */
  readonly workerTimeoutMs?: number;
  /** The least time a managed-edge worker's top-level code gets at its start (10 s; tests set less). */
  readonly workerStartMs?: number;
  /** Resident memory a managed-edge worker's workerd may hold (256 MB). */
  readonly workerMemoryBytes?: number;
  /** Workers' fetches may reach loopback, private and link-local addresses (off: public only). */
  readonly allowPrivateWorkers?: boolean;
  /** Requests in progress and runtimes running on the managed edge (serve --edge-limits). */
  readonly edgeLimits?: Partial<EdgeLimitSettings>;
  /** Fan-out per event, registrations per URL and host, events per minute per key (serve --webhook-limits). */
  readonly webhookLimits?: Partial<WebhookLimits>;
  readonly log?: (line: string) => void;
  /** Where API keys, registrations and deliveries live when not in the server's own store (a cluster's PostgreSQL). */
  readonly rows?: CloudRows;
}

export interface CloudMounts {
  /** Requests the cloud answers after the browser rules (/v1, and /edge/ to say where workers went). */
  readonly mount: (request: HttpRequest) => Promise<HttpResponse> | undefined;
}

export class Cloud {
  readonly store: CloudStore;
  readonly rows: CloudRows;
  readonly queue: DeliveryQueue;
  readonly webhooks: Webhooks;
  readonly edge: ManagedEdge;
  private readonly followers: MonitorFollowers;
  private readonly sender: DeliverySender;
  private readonly routes: CloudRoute[];
  private readonly parts: CloudParts;
  private readonly pruner: NodeJS.Timeout;
  private followerReload: NodeJS.Timeout | undefined;

  constructor(
    readonly service: MonitorService,
    readonly options: CloudOptions = {},
  ) {
    this.store = new CloudStore(service.store);
    this.rows = options.rows ?? localRows(this.store);
    this.sender = new DeliverySender(options.allowInsecureWebhooks ?? false, options.deliveryTimeoutMs);
    const limits = webhookLimits(options.webhookLimits);
    const timers = options.timers ?? realTimers;
    this.queue = new DeliveryQueue(this.rows, this.sender, timers, options.log, options.maxQueuedEventBytes, limits.fanout_per_event);
    this.webhooks = new Webhooks(this.rows, this.sender, options.allowInsecureWebhooks ?? false, service, limits);
    this.followers = new MonitorFollowers(service, this.rows, this.queue, options.log);
    this.queue.refusal = (webhook) => this.followers.refusal(webhook);
    // Rows are written by the group commit: read them back once it has run (before the route answers, which waits on it too).
    this.webhooks.changed = () => {
      this.rows.settled().then(
        () => this.followers.reload(),
        () => {},
      );
    };
    this.parts = { service, store: this.rows, webhooks: this.webhooks, queue: this.queue, eventRate: new EventRate(limits.events_per_minute, () => timers.now()) };
    const caps = edgeCaps(options.edgeLimits);
    this.edge = new ManagedEdge(
      this.rows,
      options.edgeDomain ?? 'localhost',
      options.log,
      {
        ...defaultWorkerLimits,
        ...(options.workerTimeoutMs !== undefined && { timeoutMs: options.workerTimeoutMs }),
        ...(options.workerStartMs !== undefined && { startMs: options.workerStartMs }),
        ...(options.workerMemoryBytes !== undefined && { memoryBytes: options.workerMemoryBytes }),
        allowPrivate: options.allowPrivateWorkers ?? false,
        runtimes: caps.runtimes,
      },
      caps.requests,
    );
    this.routes = [...webhookRoutes(this.parts), ...workerRoutes(this.edge), ...adminRoutes(this.rows, this.edge, this.webhooks)];
    this.queue.resume();
    const prune = () => {
      const failed = (error: Error) => options.log?.(`webhook deliveries: cannot prune: ${error.message}`);
      this.rows.pruneDeliveries(new Date(Date.now() - deliveryLogDays * 86_400_000).toISOString()).catch(failed);
      this.rows.pruneBodies(new Date(Date.now() - 3_600_000).toISOString()).catch(failed);
      // A cron run's claim matters only while nodes may still fire it: a day is ample.
      this.rows.pruneCronRuns(Date.now() - 86_400_000).catch((error: Error) => options.log?.(`edge workers: cannot prune cron claims: ${error.message}`));
    };
    // Registrations made through other nodes: followers are read again every few seconds.
    if (this.rows.shared) {
      this.followerReload = setInterval(() => void this.followers.reload().catch(() => {}), 2_000);
      this.followerReload.unref();
    }
    prune();
    this.pruner = setInterval(prune, 3_600_000);
    this.pruner.unref();
  }

  readonly mounts: CloudMounts = {
    mount: (request) => {
      const edgePath = /^\/edge(?:\/([^/]*).*)?$/.exec(request.path);
      if (edgePath) {
        const name = edgePath[1] && workerName.test(edgePath[1]) ? edgePath[1] : '<name>';
        return Promise.resolve(
          jsonResponse(404, { code: 'NOT_FOUND', error: `Workers do not answer on the API's origin; worker "${name}" is at ${this.edge.urlOf(name)}.` }),
        );
      }
      if (request.path !== cloudBasePath && !request.path.startsWith(`${cloudBasePath}/`)) return undefined;
      return this.answer(request);
    },
  };

  private async answer(request: HttpRequest): Promise<HttpResponse> {
    const rest = request.path.slice(cloudBasePath.length);
    try {
      const answer = await answerCloud(this.parts, this.routes, request, bearerOf(request), rest);
      return jsonResponse(answer.status, answer.body);
    } catch (error) {
      if (error instanceof ProtocolError) throw error;
      this.options.log?.(`cloud API ${request.method} ${request.path} failed: ${(error as Error).stack ?? String(error)}`);
      throw error;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.pruner);
    clearInterval(this.followerReload);
    this.followers.close();
    this.queue.close();
    // Destroying the sockets ends attempts in flight at once; their rows stay pending for the next start.
    this.sender.close();
    await this.queue.idle();
    await this.edge.close();
  }
}
