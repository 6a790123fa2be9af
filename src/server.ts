// Composes a running monitor server: store, service, doors and transport.
import type { Kysely } from 'kysely';
import { Draining } from './transport/draining.ts';
import { trustProxies } from './transport/forwarded-for.ts';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { type Clock, systemClock } from './actors/clock.ts';
import type { Cloud, CloudOptions } from './cloud/cloud.ts';
import type { ClientLimitSettings } from './service/client-limits.ts';
import { listenFailure, probeListen } from './transport/listen-failure.ts';
import { redactCredentials, redactingLog } from './net/redact.ts';
import { isLoopbackHost } from './service/loopback.ts';
import { MonitorService } from './service/service.ts';
import { defaultSourceKinds } from './sources/config.ts';
import { SourceManager } from './sources/manager.ts';
import { memoryPath, Store } from './store/store.ts';
import { createHttpHandler, type DoorExtensions, tooLargeResponse } from './transport/http-door.ts';
import type { HttpTransport } from './transport/http-types.ts';
import { createTransport, type TransportChoice } from './transport/select-transport.ts';
import { Dashboard, withDashboard } from './ui/dashboard.ts';
import type { ViewerCaps } from './ui/shared-views.ts';

export interface ServerOptions {
  readonly host?: string;
  readonly port?: number;
  /** SQLite state file; in memory when absent. */
  readonly state?: string;
  /** A postgres:// URL: this server is one node of a cluster on that database (protocol.md §20). */
  readonly store?: string;
  /** A cluster node's id (default: derived from the host name and the port, so it survives restarts). */
  readonly nodeId?: string;
  /** A cluster node's replica size (MB) past which cold monitors are dropped from it (default 512). */
  readonly replicaBudgetMB?: number;
  /** A cluster node's pooled PostgreSQL sessions at most (default 8; it holds 3 more: batches, notifications, ownership). */
  readonly storeSessions?: number;
  readonly registrationToken?: string;
  readonly retireAfterMuteSeconds?: number;
  /** true: enabled with a generated token; a string: enabled with that token. */
  readonly allowAdmin?: boolean | string;
  readonly allowOrigins?: readonly string[];
  readonly allowHosts?: readonly string[];
  /** Reverse proxies whose X-Forwarded-For names the client (transport/forwarded-for.ts). */
  readonly trustProxies?: readonly string[];
  readonly maxBodyBytes?: number;
  readonly heartbeatMs?: number;
  /** Per-client-address limits for anonymous use (service/client-limits.ts). */
  readonly clientLimits?: Partial<ClientLimitSettings>;
  readonly transport?: TransportChoice;
  readonly clock?: Clock;
  /** Doors added by other modules (SSE, JSON-RPC). */
  readonly extensions?: (service: MonitorService) => DoorExtensions;
  /** Live sources (§18): kinds run, the root for file/log paths, shell opt-in. */
  /**
   * `allowPrivate`: http, feed and ws sources may reach loopback, private and link-local
   * addresses; by default only when the server listens on loopback alone (every client is local).
   */
  readonly sources?: { kinds?: readonly string[]; root?: string; allowShell?: boolean; allowPrivate?: boolean; minBackoffMs?: number; maxBackoffMs?: number };
  /** Streams every actor to the Stately inspector on this port (§19); off when absent. */
  readonly inspectPort?: number;
  /** Where the inspector listens (loopback unless given); beyond loopback it needs the admin token. */
  readonly inspectHost?: string;
  /** The cloud API under /v1 and the managed edge (on unless false). */
  readonly cloud?: CloudOptions | false;
  /** Dashboard viewers (/ui/events) open at once: without a token, and with one. */
  readonly dashboardViewers?: Partial<ViewerCaps>;
  readonly log?: (line: string) => void;
}

export interface RunningServer {
  readonly url: string;
  readonly port: number;
  readonly transport: HttpTransport['name'];
  readonly fallbackReason?: string;
  readonly adminToken?: string;
  readonly service: MonitorService;
  readonly cloud?: Cloud;
  readonly dashboard: Dashboard;
  /** The managed edge's own port, where workers answer by Host (absent without the cloud). */
  readonly edgePort?: number;
  /** The inspector's WebSocket URL when --inspect is on. */
  readonly inspectUrl?: string;
  close(): Promise<void>;
}

/** How long a stopping server waits for the requests it started to be answered. */
const drainLimitMs = 10_000;

/** The largest unsent SSE buffer per connection before the stream is closed. */
export const maxStreamBufferBytes = 1 << 20;

export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  // A port that is taken (or an address that is not this machine's) refuses
  // the start before a state file, a database connection or an inspector is made.
  if (options.port !== undefined && options.port !== 0) {
    const refused = await probeListen(host, options.port);
    if (refused) throw listenFailure(host, options.port, refused);
  }
  const adminToken =
    options.allowAdmin === true ? `vga_${randomBytes(24).toString('base64url')}` : options.allowAdmin || undefined;
  // Every line logged goes through the one redaction: a URL's credentials never reach a log.
  const givenLog = redactingLog(options.log);
  const log = givenLog ?? ((line: string) => process.stderr.write(`${redactCredentials(line)}\n`));
  // Loaded only with --inspect: nothing of the inspector is paid for otherwise.
  const inspector =
    options.inspectPort === undefined
      ? undefined
      : await (await import('./ui/inspector.ts')).startInspector({
          port: options.inspectPort,
          host: options.inspectHost ?? '127.0.0.1',
          adminToken,
          allowOrigins: options.allowOrigins ?? [],
          allowHosts: options.allowHosts ?? [],
        });
  const cluster =
    options.store === undefined ? undefined : await (await import('./cluster/cluster-node.ts')).ClusterNode.open(options.store, log, options.replicaBudgetMB, options.storeSessions);
  // A cluster node's SQLite is a replica in a private temporary file with a bounded page cache;
  // PostgreSQL holds the state.
  let store: Store;
  try {
    store = cluster
      ? Store.open({ path: cluster.replicaFile.path, scratch: cluster.replicaStore, commits: cluster.commitQueue })
      : Store.open({ path: options.state ?? memoryPath });
  } catch (error) {
    await cluster?.close();
    throw error;
  }
  const service = new MonitorService({
    inspect: inspector?.inspect,
    store,
    clock: options.clock ?? systemClock,
    registrationToken: options.registrationToken,
    adminToken,
    retireAfterMuteSeconds: options.retireAfterMuteSeconds,
    maxBodyBytes: options.maxBodyBytes,
    clientLimits: options.clientLimits,
    heartbeatMs: options.heartbeatMs,
    log,
    timersRunHere: cluster && ((mkey) => cluster.runsTimersOf(mkey)),
  });
  try {
    await cluster?.attach(service);
  } catch (error) {
    service.close();
    await cluster?.close();
    throw error;
  }
  let transport!: HttpTransport & { fallbackReason?: string };
  let edgeTransport: HttpTransport | undefined;
  const draining = new Draining();
  let port: number;
  let url: string;
  let cloud: Cloud | undefined;
  let sources: SourceManager | undefined;
  let dashboard: Dashboard;
  try {
    sources = new SourceManager(service, {
      kinds: new Set(options.sources?.kinds ?? defaultSourceKinds),
      root: resolve(options.sources?.root ?? process.cwd()),
      allowShell: options.sources?.allowShell ?? false,
      allowPrivate: options.sources?.allowPrivate ?? isLoopbackHost(host),
      minBackoffMs: options.sources?.minBackoffMs,
      maxBackoffMs: options.sources?.maxBackoffMs,
      log,
    }).attach();
    dashboard = new Dashboard(service, options.dashboardViewers);
    if (options.cloud !== false) {
      const { Cloud } = await import('./cloud/cloud.ts');
      // A cluster's API keys, registrations and deliveries are the cluster's: every node serves every key.
      const rows = cluster && (await import('./cloud/pg-cloud-rows.ts')).pgCloudRows(cluster.connection.db as Kysely<never>);
      cloud = new Cloud(service, { ...options.cloud, log: redactingLog(options.cloud?.log ?? options.log), ...(rows && { rows }) });
    }
    transport = await createTransport(options.transport ?? 'auto');
    const handler = createHttpHandler(service, {
      allowOrigins: options.allowOrigins ?? [],
      allowHosts: options.allowHosts ?? [],
      extensions: withDashboard(dashboard, { ...options.extensions?.(service), ...cloud?.mounts }),
    });
    ({ port } = await transport.listen(draining.wrap(trustProxies(handler, options.trustProxies ?? [])), {
      host,
      port: options.port ?? 8130,
      maxBodyBytes: service.options.maxBodyBytes,
      maxStreamBufferBytes,
      tooLarge: tooLargeResponse,
    }));
    // Named in the turn the listen resolves, before any request is read; its timers start after its first heartbeat.
    url = urlOf(host, port);
    await cluster?.identify(url, port, options.nodeId);
    if (cloud) {
      const { createEdgeHandler } = await import('./cloud/edge/edge-door.ts');
      // The edge's workers are other people's code: an origin apart from the API and the dashboard.
      const edgeOptions = options.cloud === false ? undefined : options.cloud;
      const listenEdge = async (port: number) => {
        edgeTransport = await createTransport(options.transport ?? 'auto');
        const edge = { host, port, maxBodyBytes: service.options.maxBodyBytes, maxStreamBufferBytes, tooLarge: tooLargeResponse, portFlag: '--edge-port' };
        return (await edgeTransport.listen(createEdgeHandler(cloud!.edge, givenLog), edge)).port;
      };
      const wanted = edgeOptions?.edgePort ?? 0;
      try {
        cloud.edge.listeningOn(await listenEdge(wanted));
      } catch (error) {
        // The default edge port (wrangler's 8787) being taken must not stop a server that was not asked for it.
        if (!edgeOptions?.edgePortPreferred || wanted === 0 || (error as { code?: string }).code !== 'EADDRINUSE') throw new Error(`the edge port: ${(error as Error).message}`);
        await edgeTransport?.close().catch(() => {});
        cloud.edge.listeningOn(await listenEdge(0));
        log(`vigil: the edge's default port ${wanted} is taken (${(error as Error).message.replace(/^port \d+ on \S+ is already in use by /, '').replace(/; stop it.*$/, '')}); edge workers answer on port ${cloud.edge.port} instead (--edge-port chooses)`);
      }
    }
  } catch (error) {
    await edgeTransport?.close().catch(() => {});
    await transport?.close().catch(() => {});
    sources?.close();
    await cloud?.close();
    service.close();
    await cluster?.close();
    inspector?.close();
    throw error;
  }
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    transport: transport.name,
    fallbackReason: transport.fallbackReason,
    adminToken,
    service,
    cloud,
    dashboard,
    edgePort: cloud?.edge.port,
    inspectUrl: inspector?.url,
    close() {
      // A drain: stop accepting, answer what was started (waiting pulls answer now), refuse what comes
      // after, let the batches in flight commit, then close.
      closing ??= (async () => {
        sources?.close();
        dashboard.close();
        transport.stopListening();
        service.drain();
        const unanswered = await draining.drain(drainLimitMs);
        if (unanswered > 0) log(`vigil: ${unanswered} request(s) still unanswered ${drainLimitMs / 1000} s after the stop began; closing their connections`);
        await transport.close();
        await edgeTransport?.close();
        await cloud?.close();
        await service.settle().catch(() => {});
        await cluster?.quiesce();
        service.close();
        await cluster?.close();
        await inspector?.close();
      })();
      return closing;
    },
  };
}

/** Where to reach a server listening on host:port. A wildcard address is where it listens, not somewhere to connect: this machine's loopback. */
function urlOf(host: string, port: number): string {
  const shownHost = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}`;
}
