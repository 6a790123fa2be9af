// The HTTP client the CLI commands use to talk to a running server.
import { ExitCode } from '../errors/exit-codes.ts';

export class ServerError extends Error {
  override readonly name = 'ServerError';
  constructor(readonly status: number, readonly body: { code?: string; error?: string } & Record<string, unknown>) {
    super(`${body.code ?? status}: ${body.error ?? 'the server refused the request'}`);
  }
}

export class UnreachableError extends Error {
  override readonly name = 'UnreachableError';
  readonly exitCode = ExitCode.unreachable;
}

export interface ServerClient {
  readonly base: string;
  // biome-ignore lint/suspicious/noExplicitAny: a server reply is JSON the commands read field by field
  request<T = any>(method: 'GET' | 'POST', path: string, options?: { token?: string; body?: unknown; signal?: AbortSignal }): Promise<T>;
}

export function serverClient(base: string): ServerClient {
  const root = `${base.replace(/\/+$/, '').replace(/\/mp\/v0$/, '')}/mp/v0`;
  return {
    base: root,
    async request(method, path, options = {}) {
      const headers: Record<string, string> = {};
      if (options.token) headers.authorization = `Bearer ${options.token}`;
      if (options.body !== undefined) headers['content-type'] = 'application/json';
      let response: Response;
      try {
        response = await fetch(`${root}${path}`, {
          method,
          headers,
          body: options.body === undefined ? undefined : JSON.stringify(options.body),
          signal: options.signal,
        });
      } catch (error) {
        if ((error as Error).name === 'AbortError') throw error;
        throw new UnreachableError(`cannot reach ${root}: ${((error as Error).cause as Error | undefined)?.message ?? (error as Error).message}`);
      }
      const text = await response.text();
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
