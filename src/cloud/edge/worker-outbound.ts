// Where a managed-edge worker's fetch() may go. A worker's code is anyone's
// with an API key, and workerd runs on the server's machine: left alone, its
// fetch reaches loopback (the Vigil server itself, other workers' workerd
// ports), private networks and cloud metadata. Every outbound request of a
// worker is handed to this function (miniflare's outboundService) and sent
// from here under the webhooks' and sources' address rules
// (src/net/inward-addresses.ts): a name is checked after it resolves, a
// literal address before connecting. Each redirect hop is a new fetch from
// the worker and is checked the same way. `--allow-private-workers` lifts it.
import { GuardedClient, literalRefusal } from '../../net/guarded-client.ts';
import { guardedLookup } from '../../net/inward-addresses.ts';

export const privateWorkersHint = 'this server lets workers fetch only public addresses (start it with --allow-private-workers to allow more)';

/** Marks an answer the edge gave in the destination's place. */
export const refusedHeader = 'x-vigil-edge-refused';

export class WorkerOutbound {
  private readonly client = new GuardedClient(guardedLookup(false, privateWorkersHint), (hostname) => literalRefusal(hostname, false, privateWorkersHint));

  constructor(private readonly timeoutMs: number) {}

  /** miniflare's outboundService: the worker's request, sent under the rules; a refusal or failure is a 502 saying why. */
  readonly fetch = async (request: Request): Promise<Response> => {
    try {
      const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
      const answer = await this.client.fetch(request.url, {
        method: request.method,
        headers: [...request.headers],
        // Streamed, never gathered: a worker's upload may be larger than this server should hold.
        body: hasBody ? (request.body as ReadableStream | null) : undefined,
        duplex: 'half',
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      const bodiless = answer.status === 101 || answer.status === 204 || answer.status === 205 || answer.status === 304;
      return new Response(bodiless ? null : (answer.body as ReadableStream | null), { status: answer.status, statusText: answer.statusText, headers: [...answer.headers] });
    } catch (error) {
      const cause = (error as Error).cause as Error | undefined;
      const reason = cause?.message ?? (error as Error).message;
      return new Response(`The managed edge could not fetch ${new URL(request.url).host}: ${reason}\n`, {
        status: 502,
        headers: { 'content-type': 'text/plain; charset=utf-8', [refusedHeader]: '1' },
      });
    }
  };

  close(): Promise<void> {
    return this.client.close();
  }
}
