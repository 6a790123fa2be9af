// Helpers shared by the HTTP suite: one real server per describe block, and
// reads of a monitor's feed the way a client would do them.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll } from 'vitest';
import { type Base, call, replayAll, subscribe } from '../support/client.ts';
import { type ServerProcess, type StartOptions, startServerProcess } from '../support/server-process.ts';

/** Starts a server before the block's tests and stops it after; read `.base` inside tests. */
export function useServer(options: StartOptions): { readonly base: string; readonly url: string; readonly server: ServerProcess } {
  let server: ServerProcess | undefined;
  beforeAll(async () => {
    server = await startServerProcess(options);
  });
  afterAll(() => server?.stop());
  return {
    get base() {
      return server!.base;
    },
    get url() {
      return server!.url;
    },
    get server() {
      return server!;
    },
  };
}

let unique = 0;
/** A name no other test in this process uses. */
export const fresh = (prefix: string) => `${prefix}-${process.pid}-${++unique}`;

export const path = (monitor: string, rest = '') => `/monitors/${encodeURIComponent(monitor)}${rest}`;

/** The monitor's highest seq, as served. */
export async function headOf(base: Base, monitor: string, ownerToken: string): Promise<number> {
  const reply = await call(base, 'GET', path(monitor), { token: ownerToken });
  if (reply.status !== 200) throw new Error(`get failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body.head as number;
}

/**
 * Every observation of a monitor from seq 1, read through a fresh owner
 * subscription with a replay cursor (which writes one `subscribed` entry).
 */
export async function readFeed(base: Base, monitor: string, ownerToken: string): Promise<any[]> {
  const sub = await subscribe(base, { monitor, subscriber: fresh('reader') }, ownerToken);
  return replayAll(base, sub);
}

/** The observation at `seq`, or undefined. */
export async function observationAt(base: Base, monitor: string, ownerToken: string, seq: number) {
  const feed = await readFeed(base, monitor, ownerToken);
  return feed.find((o) => Number(o.id) === seq);
}

export const vigilType = (name: string) => `ai.vigil.monitor.${name}`;

export const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Fails unless `body` is the protocol's error body `{code, error}` with a non-empty sentence. */
export function expectErrorShape(body: unknown): asserts body is { code: string; error: string } {
  const b = body as { code?: unknown; error?: unknown };
  if (typeof b !== 'object' || b === null || typeof b.code !== 'string' || typeof b.error !== 'string' || b.error === '') {
    throw new Error(`not an error body {code, error}: ${JSON.stringify(body)}`);
  }
}

export interface RawReply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: any;
}

/**
 * One request through node:http, for what fetch will not send as given: a
 * chosen Host header, a chunked body without a length.
 */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer; chunks?: readonly Buffer[] },
): Promise<RawReply> {
  return new Promise((done, fail) => {
    const request = httpRequest(url, { method: options.method ?? 'GET', headers: options.headers }, (response) => {
      const parts: Buffer[] = [];
      response.on('data', (part: Buffer) => parts.push(part));
      response.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          // Left as text for the test to judge.
        }
        done({ status: response.statusCode ?? 0, headers: response.headers, body });
      });
      response.on('error', fail);
    });
    // The server may answer and close before reading a refused body whole; a
    // connection closed with no answer at all is reported as status 0.
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE' && error.code !== 'ECONNRESET') return fail(error);
      setTimeout(() => done({ status: 0, headers: {}, body: undefined }), 500);
    });
    if (options.chunks) for (const chunk of options.chunks) request.write(chunk);
    request.end(options.body);
  });
}
