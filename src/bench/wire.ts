// How the bench talks to a server: plain HTTP against the wire protocol
// (protocol.md), so that it measures any implementation. Each client of a
// worker thread sends one request at a time over keep-alive connections of
// one undici Agent per thread; an answer is never trusted beyond its status
// and the fields the client needs.
import { Agent } from 'undici';

/** Untyped JSON from the server under test: read field by field. */
// biome-ignore lint/suspicious/noExplicitAny: any server may answer anything
export type WireBody = any;

export interface WireReply {
  /** HTTP status; 0 when no answer came (connection refused or reset, timeout). */
  readonly status: number;
  readonly body: WireBody;
  /** The error code of a refusal (`LEASE_HELD`), or why no answer came (`ECONNRESET`, `timeout`). */
  readonly code: string | undefined;
}

/** `http://host:port` or `http://host:port/mp/v0` → the /mp/v0 root, without a trailing slash. */
export function protocolRoot(base: string): string {
  const trimmed = base.replace(/\/+$/, '');
  return /\/mp\/v0$/.test(trimmed) ? trimmed : `${trimmed}/mp/v0`;
}

export class Wire {
  private readonly agent: Agent;

  /** `connections`: at most this many keep-alive sockets per server. */
  constructor(connections: number, private readonly timeoutMs: number) {
    this.agent = new Agent({
      connections,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      connect: { timeout: timeoutMs },
    });
  }

  /** `root` is a protocol root (…/mp/v0); `path` starts with a slash. */
  async request(root: string, method: 'GET' | 'POST', path: string, body?: unknown, token?: string, headers: Record<string, string> = {}): Promise<WireReply> {
    const url = new URL(root + path);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const sent: Record<string, string> = { ...headers };
    if (payload !== undefined) sent['content-type'] = 'application/json';
    if (token !== undefined) sent.authorization = `Bearer ${token}`;
    try {
      const reply = await this.agent.request({ origin: url.origin, path: url.pathname + url.search, method, headers: sent, body: payload });
      const text = await reply.body.text();
      let parsed: WireBody = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        // Not JSON: kept as text.
      }
      const code = reply.statusCode >= 300 ? (typeof parsed?.code === 'string' ? parsed.code : `HTTP_${reply.statusCode}`) : undefined;
      return { status: reply.statusCode, body: parsed, code };
    } catch (error) {
      return { status: 0, body: undefined, code: failureCode(error) };
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  get requestTimeoutMs(): number {
    return this.timeoutMs;
  }
}

function failureCode(error: unknown): string {
  const e = error as { code?: string; cause?: { code?: string }; name?: string };
  if (e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT' || e.code === 'UND_ERR_CONNECT_TIMEOUT') return 'timeout';
  return e.cause?.code ?? e.code ?? e.name ?? 'ERROR';
}
