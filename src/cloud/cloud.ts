// The cloud API that `vigil serve` hosts (recipes-and-sdk.md §6): API keys,
// signed webhooks with durable retries, inbound triggers and the managed
// edge. It keeps its rows in the server's store and plugs into the HTTP door
// through two hooks: /v1 behind the browser rules, the edge before them
// (an edge worker is a public site, reached by its own host name).
import { ProtocolError } from '../protocol/errors.ts';
import type { MonitorService } from '../service/service.ts';
import { bearerOf, jsonResponse } from '../transport/http-door.ts';
import type { HttpRequest, HttpResponse } from '../transport/http-types.ts';
import { CloudStore } from './cloud-store.ts';
import { answerCloud, type CloudParts, type CloudRoute, webhookRoutes } from './cloud-routes.ts';
import { DeliveryQueue, type DeliveryTimers, realTimers } from './delivery-queue.ts';
import { ManagedEdge } from './edge/managed-edge.ts';
import { defaultWorkerLimits, isReservedEdgePath, WorkerLimitError } from './edge/worker-runtimes.ts';
import { DeliverySender } from './signed-delivery.ts';
import { workerRoutes } from './worker-routes.ts';
import { Webhooks } from './webhooks.ts';

export const cloudBasePath = '/v1';
/** Finished deliveries are listed for this long, then forgotten. */
export const deliveryLogDays = 7;

export interface CloudOptions {
  /** Plain http to loopback, and private addresses, become acceptable webhook targets. */
  readonly allowInsecureWebhooks?: boolean;
  /** Workers are also served at <name>.<edgeDomain> by Host header. */
  readonly edgeDomain?: string;
  readonly timers?: DeliveryTimers;
  /** Per-attempt timeout of a delivery (10 s). */
  readonly deliveryTimeoutMs?: number;
  /** Bytes of event bodies one API key may have waiting for webhook delivery (64 MiB). */
  readonly maxQueuedEventBytes?: number;
  /** How long a managed-edge worker may take over a request or a scheduled run (30 s). */
  readonly workerTimeoutMs?: number;
  readonly log?: (line: string) => void;
}

export interface CloudMounts {
  /** Requests the cloud answers after the browser rules (/v1). */
  readonly mount: (request: HttpRequest) => Promise<HttpResponse> | undefined;
  /** Requests the cloud answers before the browser rules (the edge). */
  readonly unguarded: (request: HttpRequest) => Promise<HttpResponse> | undefined;
}

export class Cloud {
  readonly store: CloudStore;
  readonly queue: DeliveryQueue;
  readonly webhooks: Webhooks;
  readonly edge: ManagedEdge;
  private readonly sender: DeliverySender;
  private readonly routes: CloudRoute[];
  private readonly parts: CloudParts;
  private readonly pruner: NodeJS.Timeout;

  constructor(
    readonly service: MonitorService,
    readonly options: CloudOptions = {},
  ) {
    this.store = new CloudStore(service.store);
    this.sender = new DeliverySender(options.allowInsecureWebhooks ?? false, options.deliveryTimeoutMs);
    this.queue = new DeliveryQueue(this.store, this.sender, options.timers ?? realTimers, options.log, options.maxQueuedEventBytes);
    this.webhooks = new Webhooks(this.store, this.sender, options.allowInsecureWebhooks ?? false);
    this.parts = { service, store: this.store, webhooks: this.webhooks, queue: this.queue };
    this.edge = new ManagedEdge(this.store, options.edgeDomain, options.log, {
      ...defaultWorkerLimits,
      ...(options.workerTimeoutMs !== undefined && { timeoutMs: options.workerTimeoutMs }),
    });
    this.routes = [...webhookRoutes(this.parts), ...workerRoutes(this.edge)];
    this.queue.resume();
    const prune = () => {
      this.store.pruneDeliveries(new Date(Date.now() - deliveryLogDays * 86_400_000).toISOString());
      this.store.pruneBodies(new Date(Date.now() - 3_600_000).toISOString());
    };
    prune();
    this.pruner = setInterval(prune, 3_600_000);
    this.pruner.unref();
  }

  readonly mounts: CloudMounts = {
    mount: (request) => {
      if (request.path !== cloudBasePath && !request.path.startsWith(`${cloudBasePath}/`)) return undefined;
      return this.answer(request);
    },
    unguarded: (request) => {
      const target = this.edge.route(request.path, request.headers.host);
      return target ? this.serveEdge(target.name, target.path, request) : undefined;
    },
  };

  private async serveEdge(name: string, path: string, request: HttpRequest): Promise<HttpResponse> {
    if (isReservedEdgePath(path)) {
      return jsonResponse(404, { code: 'NOT_FOUND', error: `Paths under /cdn-cgi/ belong to the edge itself; worker "${name}" cannot be reached there.` });
    }
    try {
      const response = await this.edge.runtimes.fetch(name, path, request);
      return response ?? jsonResponse(404, { code: 'NOT_FOUND', error: `No worker "${name}" is deployed on this edge.` });
    } catch (error) {
      this.options.log?.(`edge worker ${name} failed: ${(error as Error).message}`);
      if (error instanceof WorkerLimitError) return jsonResponse(error.status, { code: 'UNAVAILABLE', error: error.message });
      return jsonResponse(502, { code: 'UNAVAILABLE', error: `Worker "${name}" could not answer: ${(error as Error).message}` });
    }
  }

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
    this.queue.close();
    // Destroying the sockets ends attempts in flight at once; their rows stay pending for the next start.
    this.sender.close();
    await this.queue.idle();
    await this.edge.close();
  }
}
