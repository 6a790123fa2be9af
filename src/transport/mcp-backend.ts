// What the MCP door runs its tools and resources on: the service in this
// process (`vigil mcp --state`), or a running server over JSON-RPC
// (`vigil mcp --base`, see mcp-remote.ts). Resources are read with the
// tokens this session has seen, so that a private monitor created through
// the session is listed like a public one.
import { asProtocolError, type ErrorBody } from '../protocol/errors.ts';
import { toPlain } from '../protocol/raw-json.ts';
import { type Caller, canSee } from '../service/access.ts';
import { invoke, type OperationName } from '../service/operations.ts';
import type { MonitorService } from '../service/service.ts';

export type Outcome = { ok: true; status: number; body: Record<string, unknown> } | { ok: false; status: number; body: ErrorBody };

export interface ListedMonitor {
  readonly id: string;
  readonly name: string;
}

export interface McpBackend {
  /** Where the state lives, for the start-up line. */
  readonly describe: string;
  run(operation: OperationName, input: Record<string, unknown>, bearer: string | undefined, signal?: AbortSignal): Promise<Outcome>;
  /** Monitors visible to nobody in particular (public) or to one of these tokens. */
  visible(bearers: readonly string[]): Promise<ListedMonitor[]>;
  /** The token to read monitor `id` with ('' when public), undefined when none of these may see it. */
  readerOf(id: string, bearers: readonly string[]): Promise<string | undefined>;
  /** Calls `listener` with a monitor's id whenever it records something (best effort for a remote server). */
  onRecorded(listener: (id: string) => void, watched: () => Iterable<[id: string, bearer: string]>): () => void;
  close(): Promise<void>;
}

export function localBackend(service: MonitorService, describe: string): McpBackend {
  const callers = (bearers: readonly string[]): Caller[] => [{}, ...bearers.map((bearer) => ({ bearer }))];
  return {
    describe,
    async run(operation, input, bearer, signal) {
      // Validation normalises the input in place; a refusal records what the client sent.
      const raw = structuredClone(input);
      try {
        const reply = await invoke(service, operation, input, { caller: { bearer }, signal, raw: () => raw });
        return { ok: true, status: reply.status, body: toPlain(reply.body) as Record<string, unknown> };
      } catch (error) {
        const protocolError = asProtocolError(error);
        return { ok: false, status: protocolError.status, body: protocolError.toBody() };
      }
    },
    async visible(bearers) {
      const all = callers(bearers);
      return [...service.allFeeds()]
        .filter((feed) => all.some((caller) => canSee(feed, caller)))
        .map((feed) => ({ id: feed.id, name: feed.definition.name }));
    },
    async readerOf(id, bearers) {
      const feed = service.feed(id);
      if (!feed) return undefined;
      const reader = callers(bearers).find((caller) => canSee(feed, caller));
      return reader === undefined ? undefined : (reader.bearer ?? '');
    },
    onRecorded(listener) {
      return service.on('recorded', (feed) => listener(feed.id));
    },
    async close() {
      await service.settle().catch(() => {});
      service.close();
    },
  };
}
