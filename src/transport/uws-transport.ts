// HttpTransport over uWebSockets.js. The only module that touches uWS (with ./uws/).
import type * as Uws from 'uWebSockets.js';
import { FlushScheduler } from './flush-scheduler.ts';
import { internalErrorResponse } from './internal-error.ts';
import { listenFailure, probeListen } from './listen-failure.ts';
import { bodyIdleMs, declaredTooLargeGraceMs, requestTimedOut } from './stalled-request.ts';
import { type HttpHandler, type HttpRequest, type HttpTransport, headOf, type ListenOptions, refusedHeadBytes } from './http-types.ts';
import { Exchange } from './uws/exchange.ts';
import type { QueuedSink } from './queued-sink.ts';
import { type UwsModule, probeUws } from './uws/native.ts';
import { framingError, invalidFraming, readHeaders } from './uws/wire.ts';

/** LIBUS_LISTEN_EXCLUSIVE_PORT (exported at run time, missing from the typings as a value). */
const exclusivePort = 1;

// Almost every body arrives in the packet that carried the headers, and uWS hands it over
// before this turn ends: the stall timer is armed only for the bodies still incomplete then,
// instead of being made and cleared for every request.
let toArm: Array<() => void> = [];
const noBody = Buffer.alloc(0);

function armAfterThisTurn(arm: () => void): void {
  toArm.push(arm);
  if (toArm.length > 1) return;
  setImmediate(() => {
    const due = toArm;
    toArm = [];
    for (const each of due) each();
  });
}

/** Collects the body, or calls `tooLarge` as soon as it passes the limit. */
function readBody(
  res: Uws.HttpResponse,
  limit: number,
  onBody: (body: Buffer) => void,
  tooLarge: (head: Buffer) => void,
  stalled: () => void,
  declaredTooLarge: boolean,
): void {
  let chunks: Buffer[] = [];
  let total = 0;
  // uWS keeps this handler for as long as the response lives (a waiting pull, a stream), so
  // once the body is whole it lets go of the handlers, their scope and its timers.
  let pending: { onBody: (body: Buffer) => void; tooLarge: (head: Buffer) => void; stalled: () => void } | undefined = { onBody, tooLarge, stalled };
  // A body that stops arriving is answered 408 before uWS's own idle timeout closes the socket silently.
  let timer: ReturnType<typeof setTimeout> | undefined;
  let grace: ReturnType<typeof setTimeout> | undefined;
  const settle = () => {
    const handlers = pending;
    clearTimeout(timer);
    clearTimeout(grace);
    pending = undefined;
    timer = undefined;
    grace = undefined;
    chunks = [];
    return handlers;
  };
  armAfterThisTurn(() => {
    if (!pending) return;
    timer = setTimeout(() => settle()?.stalled(), bodyIdleMs);
  });
  if (declaredTooLarge) grace = setTimeout(() => settle()?.tooLarge(Buffer.alloc(0)), declaredTooLargeGraceMs);
  res.onData((chunk, isLast) => {
    if (!pending) return;
    timer?.refresh();
    total += chunk.byteLength;
    if (total > limit || (declaredTooLarge && total > 0)) {
      const head = headOf([...chunks, Buffer.from(new Uint8Array(chunk, 0, Math.min(chunk.byteLength, refusedHeadBytes)))]);
      settle()!.tooLarge(head);
      return;
    }
    // uWS neuters the ArrayBuffer when this callback returns: copy it.
    if (chunk.byteLength > 0) chunks.push(Buffer.from(new Uint8Array(chunk)));
    if (isLast) {
      // The usual body, one chunk, is already its own copy.
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
      settle()!.onBody(body);
    }
  });
}

/**
 * A request as handlers see it. A class, not an object literal with getters: a literal's accessors are
 * made anew for every request, and V8 kept a quarter of each young generation alive past its
 * scavenges (promoted, then collected by mark-compact): 1.8 µs of CPU per request measured alone.
 */
class UwsRequest implements HttpRequest {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly query: string,
    readonly headers: Readonly<Record<string, string>>,
    readonly body: Buffer,
    private readonly exchange: Exchange,
  ) {}

  /** Read when first asked for (uWS asks the kernel, getpeername, on every read): most requests never ask. */
  get remoteAddress(): string {
    return this.exchange.remoteAddress();
  }

  get signal(): AbortSignal {
    return this.exchange.signal;
  }

  clientGone(): boolean {
    return this.exchange.gone;
  }
}

export class UwsTransport implements HttpTransport {
  readonly name = 'uws';
  private app: Uws.TemplatedApp | undefined;
  private listenSocket: Uws.us_listen_socket | undefined;
  private readonly open = new Set<Exchange>();
  private readonly flushes = new FlushScheduler<QueuedSink>();

  constructor(private readonly uws: UwsModule) {}

  listen(handler: HttpHandler, options: ListenOptions): Promise<{ port: number }> {
    const app = this.uws.App();
    this.app = app;
    app.any('/*', (res, req) => this.accept(res, req, handler, options));
    return new Promise((resolve, reject) => {
      // Exclusive: without it uWS sets SO_REUSEPORT and a second server on the port would silently share its traffic.
      const listen = app.listen as unknown as (host: string, port: number, flags: number, cb: (socket: Uws.us_listen_socket | false) => void) => void;
      listen.call(app, options.host, options.port, exclusivePort, (socket) => {
        if (!socket) {
          // uWS gives no reason: ask the system the same question to learn why.
          void probeListen(options.host, options.port).then((code) => reject(listenFailure(options.host, options.port, code ?? 'EADDRINUSE', options.portFlag)));
          return;
        }
        this.listenSocket = socket;
        resolve({ port: this.uws.us_socket_local_port(socket) });
      });
    });
  }

  stopListening(): void {
    if (this.listenSocket) this.uws.us_listen_socket_close(this.listenSocket);
    this.listenSocket = undefined;
  }

  async close(): Promise<void> {
    this.stopListening();
    for (const exchange of [...this.open]) {
      if (exchange.stream) exchange.stream.end();
      else exchange.res.close();
    }
    // Missing from the typings but present in this build: also closes idle keep-alive sockets.
    (this.app as { close?: () => void } | undefined)?.close?.();
    this.app = undefined;
    await new Promise((resolve) => setImmediate(resolve));
  }

  private accept(res: Uws.HttpResponse, req: Uws.HttpRequest, handler: HttpHandler, options: ListenOptions): void {
    const exchange = new Exchange(res, this.open);
    // uWS invalidates `req` when this function returns, so read it all now.
    const method = req.getMethod().toUpperCase();
    const path = req.getUrl();
    const query = req.getQuery() ?? '';
    const headers = readHeaders(req);
    const isHead = method === 'HEAD';

    // uWS joins repeated headers here and parses no further; node:http refuses these framings, and so do we.
    const framing = framingError(headers);
    if (framing) {
      exchange.sendFull(invalidFraming(framing), isHead, true);
      return;
    }
    const start = (body: Buffer) => {
      const request = new UwsRequest(method, path, query, headers, body, exchange);
      void this.respond(exchange, handler, request, options);
    };
    const declaredLength = Number(headers['content-length'] ?? 0);
    if (declaredLength === 0 && headers['transfer-encoding'] === undefined) {
      // No body by the framing (most GETs, every event stream): no data handler, which uWS
      // would keep, with this scope, for as long as the response lives.
      start(noBody);
      return;
    }
    readBody(
      res,
      options.maxBodyBytes,
      start,
      (head) => exchange.sendFull(options.tooLarge(options.maxBodyBytes, { path, head }), isHead, true),
      () => exchange.sendFull(requestTimedOut(), isHead, true),
      declaredLength > options.maxBodyBytes,
    );
  }

  private async respond(exchange: Exchange, handler: HttpHandler, request: HttpRequest, options: ListenOptions) {
    let response: Awaited<ReturnType<HttpHandler>>;
    try {
      response = await handler(request);
    } catch (error) {
      response = internalErrorResponse(error, `${request.method} ${request.path}`);
    }
    if (response.kind === 'full') exchange.sendFull(response, request.method === 'HEAD');
    else exchange.startStream(response, options.maxStreamBufferBytes, this.flushes);
  }
}

export function createUwsTransport(): UwsTransport {
  const probe = probeUws();
  if (!probe.ok) throw new Error(probe.reason);
  return new UwsTransport(probe.uws);
}
