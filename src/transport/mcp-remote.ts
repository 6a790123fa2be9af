// `vigil mcp --base <url>`: the MCP door onto a running server, through its
// JSON-RPC binding (§14), instead of opening the server's state file.
import { errorCodes, type ErrorBody } from '../protocol/errors.ts';
import type { OperationName } from '../service/operations.ts';
import type { ListedMonitor, McpBackend, Outcome } from './mcp-backend.ts';

const created = new Set<OperationName>(['monitors/create', 'monitors/publish', 'feeds/subscribe']);
/** How often subscribed resources are checked for new observations on a remote server. */
const pollMs = 1000;

type RpcReply = { result?: Record<string, unknown>; error?: { code: number; message: string; data?: ErrorBody } };

export function remoteBackend(base: string): McpBackend {
  const root = `${base.replace(/\/+$/, '').replace(/\/mp\/v0$/, '')}/mp/v0`;
  const rpc = async (method: OperationName, params: Record<string, unknown>, bearer: string | undefined, signal?: AbortSignal): Promise<Outcome> => {
    let reply: RpcReply;
    try {
      const response = await fetch(`${root}/rpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        signal,
      });
      reply = (await response.json()) as RpcReply;
    } catch (error) {
      const cause = ((error as Error).cause as Error | undefined)?.message ?? (error as Error).message;
      return { ok: false, status: 503, body: { code: 'UNAVAILABLE', error: `The server at ${root} cannot be reached: ${cause}.` } };
    }
    if (reply.error) {
      const body = reply.error.data ?? { code: 'INTERNAL', error: reply.error.message };
      const status = errorCodes[body.code as keyof typeof errorCodes]?.status ?? 500;
      return { ok: false, status, body };
    }
    const result = reply.result ?? {};
    const status = created.has(method) || (method === 'leases/claim' && result.idempotent === false) ? 201 : 200;
    return { ok: true, status, body: result };
  };
  const listWith = async (bearer: string | undefined): Promise<ListedMonitor[]> => {
    const outcome = await rpc('monitors/list', {}, bearer);
    if (!outcome.ok) return [];
    return ((outcome.body.monitors ?? []) as Array<{ id: string; name?: string }>).map((m) => ({ id: m.id, name: m.name ?? m.id }));
  };
  return {
    describe: `server ${root}`,
    run: (operation, input, bearer, signal) => rpc(operation, input, bearer, signal),
    async visible(bearers) {
      const lists = await Promise.all([undefined, ...bearers].map(listWith));
      const byId = new Map(lists.flat().map((m) => [m.id, m]));
      return [...byId.values()];
    },
    async readerOf(id, bearers) {
      for (const bearer of ['', ...bearers]) {
        const outcome = await rpc('monitors/get', { id }, bearer || undefined);
        if (outcome.ok) return bearer;
      }
      return undefined;
    },
    onRecorded(listener, watched) {
      const heads = new Map<string, number>();
      const timer = setInterval(async () => {
        for (const [id, bearer] of new Map(watched())) {
          const outcome = await rpc('monitors/state', { id }, bearer || undefined);
          const head = outcome.ok ? Number((outcome.body.monitor as { head?: number } | undefined)?.head ?? outcome.body.head) : Number.NaN;
          if (Number.isNaN(head)) continue;
          if (heads.has(id) && heads.get(id) !== head) listener(id);
          heads.set(id, head);
        }
      }, pollMs);
      timer.unref();
      return () => clearInterval(timer);
    },
    async close() {},
  };
}
