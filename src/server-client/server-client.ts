// The HTTP client the CLI commands use to talk to a running server.
import { ExitCode } from '../errors/exit-codes.ts';
import { fetchTextWithin } from '../net/fetch-within.ts';

export class ServerError extends Error {
  override readonly name = 'ServerError';
  constructor(readonly status: number, readonly body: { code?: string; error?: string } & Record<string, unknown>) {
    super(`${body.code ?? status}: ${body.error ?? 'the server refused the request'}`);
  }
}

export class UnreachableError extends Error {
  override readonly name = 'UnreachableError';
  readonly exitCode = ExitCode.unreachable;

  /** The server took the connection and did not answer in time (paused, partitioned away, wedged). */
  get timedOut(): boolean {
    return (this.cause as { name?: unknown } | undefined)?.name === 'TimeoutError';
  }

  /** The connection was there and was cut (ECONNRESET, closed by the peer): a kept-alive socket the server closed, as one that restarted does. */
  get connectionCut(): boolean {
    const code = (this.cause as { code?: unknown } | undefined)?.code;
    return code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE';
  }
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** The caller's own stop (a cancelled run, Ctrl-C): the request is abandoned with an AbortError. */
  signal?: AbortSignal;
  /** How long the answer may take before the server counts as unreachable (default 30 s; a long poll adds its wait). */
  timeoutMs?: number;
}

export interface ServerClient {
  readonly base: string;
  // biome-ignore lint/suspicious/noExplicitAny: a server reply is JSON the commands read field by field
  request<T = any>(method: 'GET' | 'POST', path: string, options?: RequestOptions): Promise<T>;
}

/**
 * A server that accepted the connection and never answers (paused, partitioned away, wedged) would hold
 * a request for undici's five minutes: a command, a sentinel or a step waiting for its slot with it.
 */
export const answerWithinMs = 30_000;

export function serverClient(base: string): ServerClient {
  const root = `${base.replace(/\/+$/, '').replace(/\/mp\/v0$/, '')}/mp/v0`;
  /** One try: the reply's status and text, or UnreachableError. */
  const send = async (method: 'GET' | 'POST', path: string, options: RequestOptions): Promise<{ response: Response; text: string }> => {
    const headers: Record<string, string> = {};
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const limitMs = options.timeoutMs ?? answerWithinMs;
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    try {
      return await fetchTextWithin(`${root}${path}`, { method, headers, body, ...(options.signal ? { signal: options.signal } : {}) }, limitMs);
    } catch (error) {
      if (options.signal?.aborted) throw error;
      if ((error as Error).name === 'TimeoutError') throw new UnreachableError(`${root} did not answer ${method} ${path.split('?')[0]} within ${limitMs / 1000} s`, { cause: error });
      const cause = ((error as Error).cause as Error | undefined) ?? (error as Error);
      throw new UnreachableError(`cannot reach ${root}: ${cause.message}`, { cause });
    }
  };
  return {
    base: root,
    async request(method, path, options = {}) {
      let reply: { response: Response; text: string };
      try {
        reply = await send(method, path, options);
      } catch (error) {
        // A kept-alive connection the server closed (a server restarted since the last request) is cut
        // under the next request before the server sees it: one more try, on a new connection.
        if (!(error instanceof UnreachableError && error.connectionCut)) throw error;
        reply = await send(method, path, options);
      }
      const { response, text } = reply;
      // biome-ignore lint/suspicious/noExplicitAny: parsed JSON from the server
      let body: any;
      try {
        body = text ? JSON.parse(text) : {};
      } catch {
        throw new ServerError(response.status, { error: `the server answered ${response.status} with a body that is not JSON` });
      }
      if (!response.ok) throw new ServerError(response.status, body);
      return body;
    },
  };
}

export const defaultBase = 'http://127.0.0.1:8130';
