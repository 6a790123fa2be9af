// The `ai.vigil/monitors` tool extension (§15): the seed's tools and the
// monitor resources over MCP, as a thin door onto the service. It uses the
// SDK's low-level `Server` rather than `McpServer` because the tools publish
// JSON Schemas derived from the protocol's own (McpServer wants zod) and the
// resources need subscribe/unsubscribe handlers.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { asProtocolError, invalid, type ErrorBody } from '../protocol/errors.ts';
import { toPlain } from '../protocol/raw-json.ts';
import { extensionName, protocolVersion } from '../protocol/vocabulary.ts';
import { canSee } from '../service/access.ts';
import type { Feed } from '../service/feed.ts';
import { invoke } from '../service/operations.ts';
import { MonitorService } from '../service/service.ts';
import { memoryPath, Store } from '../store/store.ts';
import { packageVersion } from '../version.ts';
import { Coalescer, realTimers, type Timers } from './mcp-coalescer.ts';
import { configureActions, listedTools, operationOf, type ToolSpec, toolNamed, tools } from './mcp-tools.ts';

/** At most one resource-update notification per resource in this many milliseconds (§15). */
export const notifyIntervalMs = 250;

/** JSON-RPC number MCP uses for a resource that does not exist. */
const resourceNotFound = -32002;

/** Resources carry no token: over MCP a monitor is visible when it is public. */
const resourceCaller = {};

type ResourceKind = 'definition' | 'state';
const resourceUri = (id: string, kind: ResourceKind) => `monitor://${id}/${kind}`;
const uriPattern = /^monitor:\/\/([A-Za-z0-9_.-]{2,64})\/(definition|state)$/;

export interface McpDoorOptions {
  readonly timers?: Timers;
  readonly log?: (line: string) => void;
}

export interface McpDoor {
  readonly server: Server;
  /** Ends waiting pulls and resolves once every request in progress has its answer. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

export function createMcpDoor(service: MonitorService, options: McpDoorOptions = {}): McpDoor {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const server = new Server(
    { name: 'vigil', version: packageVersion },
    {
      capabilities: {
        tools: {},
        resources: { subscribe: true, listChanged: true },
        extensions: { [extensionName]: { version: protocolVersion } },
      },
      instructions:
        'Vigil monitors: create a monitor (keep its owner_token), publish observations, subscribe, pull, ack the `next` cursor, and claim subjects under leases. Pass tokens in the `bearer` field of each tool.',
    },
  );

  // Requests in progress, so that a client closing stdin still gets every answer it asked for.
  const inFlight = new Set<Promise<unknown>>();
  const shutdown = new AbortController();
  const track = <T>(work: Promise<T>): Promise<T> => {
    inFlight.add(work);
    const done = () => inFlight.delete(work);
    work.then(done, done);
    return work;
  };

  const subscribed = new Set<string>();
  const notify = (uri: string) => {
    const id = uriPattern.exec(uri)?.[1];
    const feed = id === undefined ? undefined : service.feed(id);
    if (!feed || !canSee(feed, resourceCaller)) return;
    server.sendResourceUpdated({ uri }).catch((error: unknown) => log(`vigil: mcp: cannot notify ${uri}: ${String(error)}`));
  };
  const coalescer = new Coalescer(notifyIntervalMs, notify, options.timers ?? realTimers);

  const listed = new Set<string>();
  for (const feed of service.allFeeds()) if (canSee(feed, resourceCaller)) listed.add(feed.id);
  const stopListening = service.onRecorded((feed) => {
    for (const kind of ['state', 'definition'] as const) {
      const uri = resourceUri(feed.id, kind);
      if (subscribed.has(uri)) coalescer.touch(uri);
    }
    // A new public monitor, or one whose visibility changed, changes the resource list.
    const visible = canSee(feed, resourceCaller);
    if (visible !== listed.has(feed.id)) {
      if (visible) listed.add(feed.id);
      else listed.delete(feed.id);
      server.sendResourceListChanged().catch(() => {});
    }
  });

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listedTools() }));

  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const tool = toolNamed(request.params.name);
    if (!tool) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool "${request.params.name}"; the tools are ${tools.map((t) => t.name).join(', ')}.`,
      );
    }
    const signal = AbortSignal.any([extra.signal, shutdown.signal]);
    return track(callTool(service, tool, request.params.arguments ?? {}, signal));
  });

  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: [...service.allFeeds()]
      .filter((feed) => canSee(feed, resourceCaller))
      .flatMap((feed) => [
        {
          uri: resourceUri(feed.id, 'definition'),
          name: `${feed.id} definition`,
          description: `Definition of monitor "${feed.definition.name}"`,
          mimeType: 'application/json',
        },
        {
          uri: resourceUri(feed.id, 'state'),
          name: `${feed.id} state`,
          description: `Computed state of monitor "${feed.definition.name}"; subscribe to be told when it records something`,
          mimeType: 'application/json',
        },
      ]),
  }));

  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      { uriTemplate: 'monitor://{id}/definition', name: 'monitor definition', mimeType: 'application/json' },
      { uriTemplate: 'monitor://{id}/state', name: 'monitor state', mimeType: 'application/json' },
    ],
  }));

  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    const { uri } = request.params;
    const [, id, kind] = parseUri(service, uri);
    const operation = kind === 'state' ? 'monitors/state' : 'monitors/get';
    return track(
      invoke(service, operation, { id }, { caller: resourceCaller }).then(
        (reply) => ({ contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(toPlain(reply.body)) }] }),
        (error: unknown) => {
          const body = asProtocolError(error).toBody();
          throw new McpError(resourceNotFound, body.error, body);
        },
      ),
    );
  });

  server.setRequestHandler(SubscribeRequestSchema, (request) => {
    parseUri(service, request.params.uri);
    subscribed.add(request.params.uri);
    return {};
  });

  server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    subscribed.delete(request.params.uri);
    coalescer.forget(request.params.uri);
    return {};
  });

  return {
    server,
    async drain() {
      shutdown.abort();
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      // The SDK sends an answer a few ticks after its handler resolves.
      await new Promise((done) => setImmediate(done));
    },
    async close() {
      stopListening();
      coalescer.close();
      await server.close();
    },
  };
}

/** The monitor a resource URI names; a URI of no visible monitor is "resource not found". */
function parseUri(service: MonitorService, uri: string): [string, string, ResourceKind] {
  const match = uriPattern.exec(uri);
  const feed: Feed | undefined = match ? service.feed(match[1]!) : undefined;
  if (!match || !feed || !canSee(feed, resourceCaller)) {
    throw new McpError(resourceNotFound, `No resource "${uri}": resources are monitor://<id>/definition and monitor://<id>/state of public monitors.`, {
      uri,
    });
  }
  return [uri, match[1]!, match[2] as ResourceKind];
}

/** Runs one tool: the HTTP body comes back as structured content, a refusal as `isError` with the error body. */
export async function callTool(
  service: MonitorService,
  tool: ToolSpec,
  args: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<CallToolResult> {
  const { bearer, ...input } = args;
  try {
    if (bearer !== undefined && typeof bearer !== 'string') {
      throw invalid('"bearer" must be a string: the token for this call.', { field: 'bearer' });
    }
    const operation = operationOf(tool, input);
    if (!operation) {
      throw invalid(`"action" must be one of ${configureActions.join(', ')}; got ${JSON.stringify(input.action ?? null)}.`, {
        field: 'action',
      });
    }
    if (typeof tool.operation === 'function') delete input.action;
    // Validation normalises the input in place; a refusal records what the client sent.
    const raw = structuredClone(input);
    const reply = await invoke(service, operation, input, { caller: { bearer }, signal, raw: () => raw });
    const body = toPlain(reply.body) as Record<string, unknown>;
    return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body, _meta: { 'ai.vigil/status': reply.status } };
  } catch (error) {
    const protocolError = asProtocolError(error);
    const body: ErrorBody = protocolError.toBody();
    return {
      isError: true,
      content: [{ type: 'text', text: JSON.stringify(body) }],
      structuredContent: body,
      _meta: { 'ai.vigil/status': protocolError.status },
    };
  }
}

export interface McpRunOptions {
  /** SQLite state file; in memory when absent. */
  readonly state?: string;
}

/** `vigil mcp`: serves the extension on stdin/stdout until the client goes away. Logs go to stderr only. */
export async function runMcpDoor(options: McpRunOptions): Promise<void> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const store = Store.open({ path: options.state ?? memoryPath });
  const service = new MonitorService({ store, log });
  const door = createMcpDoor(service, { log });
  let stopping = false;
  // Stdin ending is the client's goodbye: answer what it already asked, store everything, then leave.
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void (async () => {
      await door.drain();
      await service.settle().catch(() => {});
      await door.close().catch(() => {});
      service.close();
      // Stdout on a pipe is asynchronous: exit once the last answer is written.
      process.stdout.write('', () => process.exit(0));
    })();
  };
  door.server.onclose = stop;
  process.stdin.once('end', stop);
  process.stdout.on('error', stop);
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await door.server.connect(new StdioServerTransport());
  log(`vigil: serving the ${extensionName} tool extension on stdio (state ${options.state ?? 'in memory'}, pid ${process.pid})`);
}
