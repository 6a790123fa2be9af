// `vigil serve`: the HTTP, JSON-RPC and event-stream bindings under /mp/v0.
import type { CAC } from 'cac';
import { redactCredentials } from '../net/redact.ts';
import { isPostgresUrl } from '../store/postgres/url.ts';
import { clientLimitNames, defaultClientLimits } from '../service/client-limits.ts';
import { defaults } from '../service/defaults.ts';
import { isLoopbackHost } from '../service/loopback.ts';
import { ExitCode } from '../errors/exit-codes.ts';
import { defineCommand, exitWith, fail } from './command.ts';
import { defaultEdgeLimits } from '../cloud/edge/edge-limits.ts';
import { defaultWebhookLimits } from '../cloud/webhook-limits.ts';
import { defaultViewerLimits, viewerCapsOf } from '../ui/viewer-limits.ts';
import { limitPairsFlag, limitPairsHelp, listFlag, oneOfFlag, stringFlag, UsageError, wholeNumberFlag } from './options.ts';
import { type SourceFlags, sourceFlagHelp, sourceOptions } from './source-flags.ts';
import { parseTrustedProxies } from '../transport/forwarded-for.ts';

function trustedProxiesFlag(value: unknown): string[] {
  try {
    return parseTrustedProxies(listFlag(value));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

interface ServeFlags extends SourceFlags {
  port?: unknown;
  host?: unknown;
  state?: unknown;
  store?: unknown;
  nodeId?: unknown;
  replicaBudget?: unknown;
  storeSessions?: unknown;
  registrationToken?: unknown;
  retireAfterMute?: unknown;
  allowAdmin?: unknown;
  allowOrigin?: unknown;
  allowHost?: unknown;
  trustProxy?: unknown;
  maxBody?: unknown;
  transport?: unknown;
  heartbeat?: unknown;
  clientLimits?: unknown;
  clientLimitsLoopback?: unknown;
  maxAnonymousViewers?: unknown;
  maxQueuedEventBytes?: unknown;
  allowInsecureWebhooks?: unknown;
  edgeDomain?: unknown;
  edgePort?: unknown;
  workerTimeout?: unknown;
  workerMemory?: unknown;
  allowPrivateWorkers?: unknown;
  edgeLimits?: unknown;
  webhookLimits?: unknown;
  viewerLimits?: unknown;
}

function edgeDomainFlag(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const domain = value.toLowerCase().replace(/\.$/, '');
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(domain)) {
    throw new UsageError(`--edge-domain takes a DNS name such as edge.example.com; got "${value}".`);
  }
  return domain;
}

/** wrangler dev's port: where a worker's author expects one. */
export const defaultEdgePort = 8787;

function edgePortFlag(value: string | undefined, port: number): number {
  if (value === undefined) return port === 0 ? 0 : defaultEdgePort;
  const edgePort = wholeNumberFlag('--edge-port', value, 0, 65535);
  if (edgePort !== 0 && edgePort === port) throw new UsageError(`--edge-port must differ from --port (${port}): workers must not share the API's origin.`);
  return edgePort;
}

/** `name=value,...` over the known limit names, each a whole number ≥ 1. */
function clientLimitsFlag(text: string | undefined): Partial<Record<(typeof clientLimitNames)[number], number>> {
  const out: Partial<Record<(typeof clientLimitNames)[number], number>> = {};
  if (text === undefined) return out;
  for (const pair of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const [name = '', value = ''] = pair.split('=');
    if (!(clientLimitNames as readonly string[]).includes(name)) {
      throw new UsageError(`--client-limits: unknown limit "${name}"; known: ${clientLimitNames.join(', ')}`);
    }
    out[name as (typeof clientLimitNames)[number]] = wholeNumberFlag(`--client-limits ${name}`, value, 1, 1_000_000);
  }
  return out;
}

/** --store (or VIGIL_STORE): a postgres:// URL; the SQLite stores need no flag. */
function storeFlag(value: string | undefined, hasState: boolean): string | undefined {
  if (value === undefined) return undefined;
  if (!isPostgresUrl(value)) {
    throw new UsageError(`--store takes a PostgreSQL URL such as postgres://user@host:5432/vigil; got "${value.slice(0, 80)}". Without it the state is SQLite (--state <file>, or in memory).`);
  }
  if (hasState) throw new UsageError('--store and --state are exclusive: --state is a SQLite file, --store a PostgreSQL database.');
  return value;
}

/** --node-id: letters, digits, '.', '_' and '-', as it appears in /discover and logs. */
function nodeIdFlag(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(value)) throw new UsageError(`--node-id takes 1 to 64 letters, digits, '.', '_' or '-'; got "${value.slice(0, 80)}".`);
  return value;
}

export function registerServeCommands(cli: CAC): void {
  defineCommand(cli, 'serve', 'Serve the HTTP, JSON-RPC and event-stream bindings under /mp/v0')
    .option('--port <n>', 'Listening port', { default: 8130 })
    .option('--host <addr>', 'Listening address', { default: '127.0.0.1' })
    .option('--state <file>', 'Keep monitors, subscriptions, leases and observations in this SQLite file ("~" is home; default: in memory)', { type: [String] })
    .option('--store <url>', 'Keep all state in PostgreSQL (postgres://…; also VIGIL_STORE): several nodes on one database serve as one server', { type: [String] })
    .option('--node-id <id>', 'This node\'s id in a cluster (with --store; default: derived from the host name and --port, so it survives restarts)', { type: [String] })
    .option(
      '--store-sessions <n>',
      `The most pooled PostgreSQL sessions a cluster node opens, for its reads and the cloud API (with --store; default ${defaults.storeSessions}); it holds 3 more of its own, for batches, notifications and ownership`,
      { type: [String] },
    )
    .option('--replica-budget <MB>', `A cluster node's local replica size past which monitors unused for 5 s are dropped from it and read again from PostgreSQL when used (with --store; default ${defaults.replicaBudgetMB})`, { type: [String] })
    .option('--registration-token <token>', 'Require this token to create a monitor; such monitors are attested', { type: [String] })
    .option('--retire-after-mute <seconds>', 'Retire a subscription that has not pulled for this long', {
      default: defaults.retireAfterMuteSeconds,
    })
    .option('--allow-admin [token]', 'Enable the admin endpoints (a token is generated and printed when none is given)')
    .option('--allow-origin <origins>', 'Browser origins allowed to call the server (comma-separated)', { type: [String] })
    .option('--allow-host <names>', 'Extra host names accepted on loopback connections (comma-separated)', { type: [String] })
    .option('--trust-proxy <addresses>', "Reverse proxies whose X-Forwarded-For names the client (comma-separated IP addresses); per-client limits then count the forwarded client, not the proxy", {
      type: [String],
    })
    .option('--max-body <bytes>', 'Largest request body read', { default: defaults.maxBodyBytes })
    .option('--heartbeat <seconds>', 'Idle time before an event stream sends a heartbeat', { default: 15 })
    .option('--allow-insecure-webhooks', 'Let webhooks target plain http on loopback and private addresses (local testing only)')
    .option('--max-queued-event-bytes <bytes>', 'Bytes of event bodies one API key may have waiting for webhook delivery; past it POST /v1/events is answered 429', {
      default: 64 * 1024 * 1024,
    })
    .option('--edge-port <n>', `Port of the managed edge, where each worker answers at its own host name (default ${defaultEdgePort}; any free port when --port is 0)`, { type: [String] })
    .option('--edge-domain <domain>', 'Workers answer on the edge port at <name>.<domain> by Host header (default localhost: <name>.localhost reaches this machine in browsers)', { type: [String] })
    .option('--worker-memory <MB>', 'Resident memory a managed-edge worker may hold before it is stopped (its requests answered 502) and restarted', { default: 256 })
    .option('--allow-private-workers', "Let managed-edge workers fetch loopback, private and link-local addresses (this server's own ports and other workers' among them); off: public addresses only")
    .option('--worker-timeout <seconds>', 'Longest a managed-edge worker may take over a request or scheduled run before it is stopped and restarted', { default: 30 })
    .option('--webhook-limits <limits>', `Webhook limits per API key as name=value pairs (comma-separated): ${limitPairsHelp(defaultWebhookLimits)}`, { type: [String] })
    .option('--edge-limits <limits>', `Managed-edge limits as name=value pairs (comma-separated): ${limitPairsHelp(defaultEdgeLimits)}`, { type: [String] })
    .option('--client-limits <limits>', `Limits per client address for use without a token, as name=value pairs (comma-separated): ${clientLimitNames.map((n) => `${n} (${defaultClientLimits[n]})`).join(', ')}`, { type: [String] })
    .option('--max-anonymous-viewers <n>', 'Dashboards (/ui/events) open at once without a token; more are answered 429', { default: 1000 })
    .option('--viewer-limits <limits>', `Dashboard (/ui/events) limits as name=value pairs (comma-separated): ${limitPairsHelp(defaultViewerLimits)}`, { type: [String] })
    .option('--client-limits-loopback', 'Apply --client-limits to loopback clients too (off: local tools are not limited)')
    .option('--sources <kinds>', sourceFlagHelp.sources, { type: [String] })
    .option('--source-root <dir>', sourceFlagHelp.sourceRoot, { type: [String] })
    .option('--allow-shell-sources', sourceFlagHelp.allowShell)
    .option('--allow-private-sources', sourceFlagHelp.allowPrivate)
    .option('--inspect [port]', sourceFlagHelp.inspect)
    .option('--inspect-host <addr>', sourceFlagHelp.inspectHost, { type: [String] })
    .option('--transport <name>', 'Socket library: auto (uWebSockets.js when it loads), uws or node', { default: 'auto' })
    .example('vigil serve --state ~/.vigil/monitors.db --allow-origin http://localhost:5173')
    .action(async (flags: ServeFlags) => {
      const port = wholeNumberFlag('--port', flags.port, 0, 65535);
      const allowAdmin = flags.allowAdmin === undefined ? false : flags.allowAdmin === true ? true : stringFlag('--allow-admin', flags.allowAdmin);
      if (flags.nodeId !== undefined && flags.store === undefined && !process.env.VIGIL_STORE) {
        throw new UsageError('--node-id names a node of a cluster: it goes with --store postgres://…');
      }
      if (flags.replicaBudget !== undefined && flags.store === undefined && !process.env.VIGIL_STORE) {
        throw new UsageError('--replica-budget sizes a cluster node\'s replica: it goes with --store postgres://…');
      }
      if (flags.storeSessions !== undefined && flags.store === undefined && !process.env.VIGIL_STORE) {
        throw new UsageError('--store-sessions sizes a cluster node\'s PostgreSQL pool: it goes with --store postgres://…');
      }
      const options = {
        port,
        host: stringFlag('--host', flags.host) ?? '127.0.0.1',
        state: stringFlag('--state', flags.state),
        store: storeFlag(stringFlag('--store', flags.store) ?? (process.env.VIGIL_STORE || undefined), flags.state !== undefined),
        nodeId: nodeIdFlag(stringFlag('--node-id', flags.nodeId)),
        replicaBudgetMB: wholeNumberFlag('--replica-budget', stringFlag('--replica-budget', flags.replicaBudget) ?? defaults.replicaBudgetMB, 1, 1 << 20),
        storeSessions: wholeNumberFlag('--store-sessions', stringFlag('--store-sessions', flags.storeSessions) ?? defaults.storeSessions, 1, 1000),
        registrationToken: stringFlag('--registration-token', flags.registrationToken),
        retireAfterMuteSeconds: wholeNumberFlag('--retire-after-mute', flags.retireAfterMute, 1, 315360000),
        allowAdmin,
        allowOrigins: listFlag(flags.allowOrigin),
        allowHosts: listFlag(flags.allowHost),
        trustProxies: trustedProxiesFlag(flags.trustProxy),
        maxBodyBytes: wholeNumberFlag('--max-body', flags.maxBody, 1, 1 << 30),
        heartbeatMs: wholeNumberFlag('--heartbeat', flags.heartbeat, 1, 3600) * 1000,
        dashboardViewers: {
          ...viewerCapsOf(limitPairsFlag('--viewer-limits', flags.viewerLimits, defaultViewerLimits, 0)),
          anonymous: wholeNumberFlag('--max-anonymous-viewers', flags.maxAnonymousViewers, 0, 100_000),
        },
        clientLimits: { ...clientLimitsFlag(stringFlag('--client-limits', flags.clientLimits)), loopback: flags.clientLimitsLoopback === true },
        transport: oneOfFlag('--transport', flags.transport, ['auto', 'uws', 'node'] as const, 'auto'),
        ...sourceOptions(flags, allowAdmin !== false),
        cloud: {
          allowInsecureWebhooks: flags.allowInsecureWebhooks === true,
          edgeDomain: edgeDomainFlag(stringFlag('--edge-domain', flags.edgeDomain)),
          edgePort: edgePortFlag(stringFlag('--edge-port', flags.edgePort), port),
          edgePortPreferred: flags.edgePort === undefined,
          workerTimeoutMs: wholeNumberFlag('--worker-timeout', flags.workerTimeout, 1, 900) * 1000,
          maxQueuedEventBytes: wholeNumberFlag('--max-queued-event-bytes', flags.maxQueuedEventBytes, 65536, 2 ** 40),
          workerMemoryBytes: wholeNumberFlag('--worker-memory', flags.workerMemory, 64, 65536) * (1 << 20),
          allowPrivateWorkers: flags.allowPrivateWorkers === true,
          edgeLimits: limitPairsFlag('--edge-limits', flags.edgeLimits, defaultEdgeLimits),
          webhookLimits: limitPairsFlag('--webhook-limits', flags.webhookLimits, defaultWebhookLimits),
          log: (line: string) => process.stderr.write(`vigil: ${line}\n`),
        },
      };
      // Loaded here, not at the top: every other command starts without the server's modules.
      const [{ startServer }, { serverDoors }] = await Promise.all([import('../server.ts'), import('../transport/doors.ts')]);
      let server: Awaited<ReturnType<typeof startServer>>;
      try {
        server = await startServer({ ...options, extensions: serverDoors });
      } catch (error) {
        if (error instanceof UsageError) throw error;
        fail(new Error(`cannot start: ${redactCredentials((error as Error).message)}`));
      }
      if (server.fallbackReason) process.stderr.write(`vigil: ${server.fallbackReason}\n`);
      // The token comes first: a tool that reads up to the "serving" line has it too.
      if (server.adminToken && allowAdmin === true) process.stdout.write(`vigil: admin token ${server.adminToken}\n`);
      process.stdout.write(`vigil: cloud API at ${server.url}/v1, edge workers at ${server.cloud?.edge.urlOf('<name>')}\n`);
      if (server.inspectUrl) {
        const guarded = options.inspectHost !== undefined && !isLoopbackHost(options.inspectHost);
        process.stdout.write(
          guarded
            ? `vigil: inspector at ${server.inspectUrl}, admin token required (open http${server.inspectUrl.slice(2)}/#token=<admin token> in a browser, or connect with ?token=<admin token>)\n`
            : `vigil: inspector at ${server.inspectUrl} (open http${server.inspectUrl.slice(2)}/ in a browser, or connect the Stately inspector)\n`,
        );
      }
      process.stdout.write(`vigil: dashboard at ${server.url}/ui\n`);
      if (!isLoopbackHost(options.host)) {
        const privateSources = options.sources.allowPrivate ? 'may reach private addresses (--allow-private-sources)' : 'reach public addresses only (see --allow-private-sources)';
        process.stdout.write(`vigil: listening on ${options.host}: clients on other machines can connect; http, feed and ws sources ${privateSources}\n`);
        if (options.cloud.edgeDomain === undefined) {
          process.stdout.write('vigil: edge workers answer at <name>.localhost, which only this machine resolves; give other machines a wildcard DNS name with --edge-domain\n');
        }
      }
      process.stdout.write(
        `vigil: serving the monitor protocol at ${server.url}/mp/v0 (transport ${server.transport}, state ${options.store ? `${redactCredentials(options.store)}, node ${server.service.cluster?.node.id}` : (options.state ?? 'in memory')}, pid ${process.pid})\n`,
      );
      const stop = () => {
        void server.close().then(
          () => exitWith(ExitCode.ok),
          (error: unknown) => fail(new Error(`the server did not stop cleanly: ${error instanceof Error ? error.message : String(error)}`)),
        );
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
