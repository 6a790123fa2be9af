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
import { invalid } from '../protocol/errors.ts';
import { extensionName, protocolVersion } from '../protocol/vocabulary.ts';
import { MonitorService } from '../service/service.ts';
import { memoryPath, Store } from '../store/store.ts';
import { packageVersion } from '../version.ts';
import { localBackend, type McpBackend } from './mcp-backend.ts';
import { Coalescer, realTimers, type Timers } from './mcp-coalescer.ts';
import { remoteBackend } from './mcp-remote.ts';
import { allTools, configureActions, listedTools, operationOf, type ToolSpec, toolNamed } from './mcp-tools.ts';
import { linkedSignal } from '../timing/linked-signal.ts';
import { sharedController } from '../timing/shared-controller.ts';

/** At most one resource-update notification per resource in this many milliseconds (§15). */
export const notifyIntervalMs = 250;

/** JSON-RPC number MCP uses for a resource that does not exist. */
const resourceNotFound = -32002;

/** Reply fields that carry a freshly minted token. */
const mintedTokenFields = ['owner_token', 'subscribe_token', 'token'] as const;

type ResourceKind = 'definition' | 'state';
const resourceUri = (id: string, kind: ResourceKind) => `monitor://${id}/${kind}`;
const uriPattern = /^monitor:\/\/([A-Za-z0-9_.-]{2,64})\/(definition|state)$/;

export interface McpDoorOptions {
  readonly timers?: Timers;
  readonly log?: (line: string) => void;
  /** Tokens resources are read with from the start (`vigil mcp --token`), besides those the session sees. */
  readonly tokens?: readonly string[];
}

export interface McpDoor {
  readonly server: Server;
  /** Ends waiting pulls and resolves once every request in progress has its answer. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

export function createMcpDoor(backend: McpBackend, options: McpDoorOptions = {}): McpDoor {
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
  // Each tool call in progress listens on it until it ends, and a client may have any number in flight.
  const shutdown = sharedController();
  const track = <T>(work: Promise<T>): Promise<T> => {
    inFlight.add(work);
    const done = () => inFlight.delete(work);
    work.then(done, done);
    return work;
  };

  // Resources carry no token: they are read with the tokens this session has
  // used or been given, so a private monitor created here is a resource too.
  const tokens = new Set<string>(options.tokens ?? []);
  const learn = (bearer: unknown, body: Record<string, unknown>) => {
    if (typeof bearer === 'string' && bearer !== '') tokens.add(bearer);
    for (const field of mintedTokenFields) if (typeof body[field] === 'string') tokens.add(body[field] as string);
  };
  const subscribed = new Map<string, string>();
  const notify = (uri: string) => {
    if (!subscribed.has(uri)) return;
    server.sendResourceUpdated({ uri }).catch((error: unknown) => log(`vigil: mcp: cannot notify ${uri}: ${String(error)}`));
  };
  const coalescer = new Coalescer(notifyIntervalMs, notify, options.timers ?? realTimers);
  const stopListening = backend.onRecorded(
    (id) => {
      for (const kind of ['state', 'definition'] as const) {
        const uri = resourceUri(id, kind);
        if (subscribed.has(uri)) coalescer.touch(uri);
      }
    },
    () => [...subscribed].map(([uri, bearer]) => [uriPattern.exec(uri)![1]!, bearer] as [string, string]),
  );

  /** The monitor a resource URI names and the token to read it with; a URI of no visible monitor is "resource not found". */
  const resolveUri = async (uri: string): Promise<{ id: string; kind: ResourceKind; bearer: string }> => {
    const match = uriPattern.exec(uri);
    const bearer = match ? await backend.readerOf(match[1]!, [...tokens]) : undefined;
    if (!match || bearer === undefined) {
      throw new McpError(resourceNotFound, `No resource "${uri}": resources are monitor://<id>/definition and monitor://<id>/state of monitors this session can see.`, { uri });
    }
    return { id: match[1]!, kind: match[2] as ResourceKind, bearer };
  };

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listedTools() }));

  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const tool = toolNamed(request.params.name);
    if (!tool) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool "${request.params.name}"; the tools are ${allTools().map((t) => t.name).join(', ')}.`,
      );
    }
    const linked = linkedSignal([extra.signal, shutdown.signal]);
    const args = request.params.arguments ?? {};
    return track(
      callTool(backend, tool, args, linked.signal)
        .then((result) => {
          if (!result.isError) {
            learn(args.bearer, result.structuredContent as Record<string, unknown>);
            if (tool.name === 'monitor_create') server.sendResourceListChanged().catch(() => {});
          }
          return result;
        })
        .finally(linked.dispose),
    );
  });

  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: (await backend.visible([...tokens])).flatMap((monitor) => [
      {
        uri: resourceUri(monitor.id, 'definition'),
        name: `${monitor.id} definition`,
        description: `Definition of monitor "${monitor.name}"`,
        mimeType: 'application/json',
      },
      {
        uri: resourceUri(monitor.id, 'state'),
        name: `${monitor.id} state`,
        description: `Computed state of monitor "${monitor.name}"; subscribe to be told when it records something`,
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
    return track(
      (async () => {
        const { id, kind, bearer } = await resolveUri(uri);
        const outcome = await backend.run(kind === 'state' ? 'monitors/state' : 'monitors/get', { id }, bearer || undefined);
        if (!outcome.ok) throw new McpError(resourceNotFound, outcome.body.error, outcome.body);
        return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(outcome.body) }] };
      })(),
    );
  });

  server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    const { bearer } = await resolveUri(request.params.uri);
    subscribed.set(request.params.uri, bearer);
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
      await backend.close();
    },
  };
}

/** Runs one tool: the HTTP body comes back as structured content, a refusal as `isError` with the error body. */
export async function callTool(backend: McpBackend, tool: ToolSpec, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult> {
  const { bearer, ...input } = args;
  const result = (ok: boolean, status: number, body: Record<string, unknown>): CallToolResult => ({
    ...(ok ? {} : { isError: true }),
    content: [{ type: 'text', text: JSON.stringify(body) }],
    structuredContent: body,
    _meta: { 'ai.vigil/status': status },
  });
  if (bearer !== undefined && typeof bearer !== 'string') {
    const error = invalid('"bearer" must be a string: the token for this call.', { field: 'bearer' });
    return result(false, error.status, error.toBody());
  }
  const operation = operationOf(tool, input);
  if (!operation) {
    const error = invalid(`"action" must be one of ${configureActions.join(', ')}; got ${JSON.stringify(input.action ?? null)}.`, { field: 'action' });
    return result(false, error.status, error.toBody());
  }
  if (typeof tool.operation === 'function') delete input.action;
  const outcome = await backend.run(operation, input, bearer, signal);
  return result(outcome.ok, outcome.status, outcome.body);
}

export interface McpRunOptions {
  /** SQLite state file; in memory when absent. */
  readonly state?: string;
  /** A running server to attach to instead of a state file. */
  readonly base?: string;
  /** Tokens resources are read with (private and shared monitors). */
  readonly tokens?: readonly string[];
}

/** `vigil mcp`: serves the extension on stdin/stdout until the client goes away. Logs go to stderr only. */
export async function runMcpDoor(options: McpRunOptions): Promise<void> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const backend = options.base
    ? remoteBackend(options.base)
    : localBackend(new MonitorService({ store: Store.open({ path: options.state ?? memoryPath }), log }), `state ${options.state ?? 'in memory'}`);
  const door = createMcpDoor(backend, { log, tokens: options.tokens });
  let stopping = false;
  // Stdin ending is the client's goodbye: answer what it already asked, store everything, then leave.
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void (async () => {
      await door.drain();
      await door.close().catch(() => {});
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
  log(`vigil: serving the ${extensionName} tool extension on stdio (${backend.describe}, pid ${process.pid})`);
}
