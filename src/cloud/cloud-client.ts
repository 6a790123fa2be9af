// The HTTP client of the cloud API (/v1), used by `vigil api-key`, the
// webhook and worker namespaces and the event forwarder. A refusal comes back
// as a CloudError carrying the server's code and message.
import { ExitCode } from '../errors/exit-codes.ts';
import { fetchTextWithin } from '../net/fetch-within.ts';

export class CloudError extends Error {
  override readonly name = 'CloudError';
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }

  /** A command that meets it exits 3 when the API did not answer, 1 when it refused (src/errors/exit-codes.ts). */
  get exitCode(): number {
    return this.code === 'UNREACHABLE' ? ExitCode.unreachable : ExitCode.failed;
  }
}

export interface CloudClient {
  readonly apiUrl: string;
  request<T = Record<string, unknown>>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T>;
}

/** `apiUrl` is the server's root (a trailing /v1 or /mp/v0 is dropped). */
export function cloudClient(apiUrl: string, token: string | undefined, timeoutMs = 30_000): CloudClient {
  const root = apiUrl.replace(/\/+$/, '').replace(/\/(v1|mp\/v0)$/, '');
  return {
    apiUrl: root,
    async request(method, path, body) {
      const headers: Record<string, string> = {};
      if (token) headers.authorization = `Bearer ${token}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      let response: Response;
      let text: string;
      try {
        ({ response, text } = await fetchTextWithin(`${root}/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }, timeoutMs));
      } catch (error) {
        const cause = ((error as Error).cause as Error | undefined)?.message ?? (error as Error).message;
        throw new CloudError('UNREACHABLE', `cannot reach the cloud API at ${root}/v1: ${cause}`, 0);
      }
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : {};
      } catch {
        throw new CloudError('BAD_REPLY', `the cloud API answered ${response.status} with a body that is not JSON`, response.status);
      }
      if (!response.ok) {
        const { code, error, ...details } = parsed as { code?: string; error?: string };
        throw new CloudError(code ?? `HTTP_${response.status}`, error ?? `the cloud API answered ${response.status}`, response.status, details);
      }
      return parsed as never;
    },
  };
}
