// The only way checks talk to a server: plain fetch against the wire
// protocol, so the suite works against any implementation of protocol.md.
import { fetchWithin } from '../net/fetch-within.ts';

/** Wire JSON: any server may send anything, so checks test it field by field at run time. */
// biome-ignore lint/suspicious/noExplicitAny: untyped JSON from the server under test
export type Wire = any;

export interface WireReply {
  readonly status: number;
  /** Parsed JSON, or the raw text when the body is not JSON. */
  readonly body: Wire;
  readonly text: string;
  readonly headers: Headers;
  /** "METHOD /path → status", for failure messages. */
  readonly label: string;
}

export interface RequestOptions {
  readonly body?: unknown;
  /** Sent as is (e.g. malformed JSON); wins over `body`. */
  readonly rawBody?: string;
  readonly token?: string;
  readonly headers?: Record<string, string>;
  readonly query?: Record<string, string | number>;
}

export class WireClient {
  /** Monitors this client created (id and owner token), so that a run can retire them when it ends. */
  readonly created: Array<{ id: string; token: string }> = [];

  constructor(
    readonly base: string,
    private readonly timeoutMs = 20_000,
  ) {}

  async request(method: string, path: string, options: RequestOptions = {}): Promise<WireReply> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    let body: string | undefined;
    if (options.rawBody !== undefined) body = options.rawBody;
    else if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const query = options.query ? `?${new URLSearchParams(Object.entries(options.query).map(([k, v]) => [k, String(v)]))}` : '';
    const [response, text] = await fetchWithin(`${this.base}${path}${query}`, { method, headers, body }, this.timeoutMs, async (r) => {
      // An event stream never ends: only its status and headers are wanted here.
      if ((r.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
        await r.body?.cancel();
        return [r, ''] as const;
      }
      return [r, await r.text()] as const;
    });
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // Left as text: the check decides whether that is acceptable.
    }
    const reply = parsed as Wire;
    if (method === 'POST' && path === '/monitors' && response.status === 201 && typeof reply?.owner_token === 'string' && typeof reply?.monitor?.id === 'string') {
      this.created.push({ id: reply.monitor.id, token: reply.owner_token });
    }
    return { status: response.status, body: parsed, text, headers: response.headers, label: `${method} ${path}${query} → ${response.status}` };
  }

  get(path: string, options?: RequestOptions): Promise<WireReply> {
    return this.request('GET', path, options);
  }

  post(path: string, body: unknown, token?: string, options: RequestOptions = {}): Promise<WireReply> {
    return this.request('POST', path, { ...options, body, token });
  }
}
