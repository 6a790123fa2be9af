// HttpTransport over uWebSockets.js. The only module that touches uWS.
import { existsSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { createRequire } from 'node:module';
import { SocketAddress } from 'node:net';
import { dirname, join } from 'node:path';
import type * as Uws from 'uWebSockets.js';
import { FlushScheduler } from './flush-scheduler.ts';
import { failStream, internalErrorResponse } from './internal-error.ts';
import { listenFailure, probeListen } from './listen-failure.ts';
import { bodyIdleMs, requestTimedOut } from './stalled-request.ts';
import type {
  FullResponse,
  HttpHandler,
  HttpRequest,
  HttpTransport,
  ListenOptions,
  StreamResponse,
  StreamSink,
} from './http-types.ts';

type UwsModule = typeof Uws;
/** LIBUS_LISTEN_EXCLUSIVE_PORT (exported at run time, missing from the typings as a value). */
const exclusivePort = 1;
type UwsProbe = { ok: true; uws: UwsModule } | { ok: false; reason: string };

const require = createRequire(import.meta.url);
let cachedProbe: UwsProbe | undefined;

/**
 * Loads the native uWS module. The package never fails to load: without a
 * binary for this Node ABI it warns and returns a slow pure-JS shim, so we
 * look for the binary ourselves and check the package handed us that binary.
 */
export function probeUws(abi: string = process.versions.modules): UwsProbe {
  if (abi === process.versions.modules && cachedProbe) return cachedProbe;
  const probe = loadNativeUws(abi);
  if (abi === process.versions.modules) cachedProbe = probe;
  return probe;
}

function loadNativeUws(abi: string): UwsProbe {
  const runtime = `Node ${process.version} (ABI ${abi}, ${process.platform}-${process.arch})`;
  if (/^(1|true)$/i.test(process.env.UWS_USE_FALLBACK ?? '')) {
    return { ok: false, reason: 'UWS_USE_FALLBACK is set, so uWebSockets.js would run its slow JS shim' };
  }
  try {
    const packageMain = require.resolve('uWebSockets.js');
    const binary = join(dirname(packageMain), '..', 'binaries', `uws_${process.platform}_${process.arch}_${abi}.node`);
    if (!existsSync(binary)) {
      return { ok: false, reason: `uWebSockets.js has no native binary for ${runtime}; it supports Node 16, 18 and 20` };
    }
    // uWS reads this when it loads. Its default (4 KB) closes a connection whose headers
    // arrive in pieces past that size without a reply; 16 KB matches node:http.
    process.env.UWS_HTTP_MAX_HEADERS_SIZE ??= '16384';
    const uws = require('uWebSockets.js') as UwsModule;
    if (uws !== require(binary)) {
      return { ok: false, reason: `uWebSockets.js loaded its JS shim instead of the native binary on ${runtime}` };
    }
    return { ok: true, uws };
  } catch (error) {
    return { ok: false, reason: `uWebSockets.js failed to load on ${runtime}: ${(error as Error).message}` };
  }
}

// A client's address is parsed once, not on every request of its keep-alive connection.
const normalizedAddresses = new Map<string, string>();

/** uWS prints every IPv6 address in full ("0000:...:ffff:7f00:0001"); give the usual short form. */
export function normalizeRemoteAddress(text: string): string {
  let known = normalizedAddresses.get(text);
  if (known === undefined) {
    known = normalizeAddress(text);
    if (normalizedAddresses.size >= 1024) normalizedAddresses.delete(normalizedAddresses.keys().next().value!);
    normalizedAddresses.set(text, known);
  }
  return known;
}

function normalizeAddress(text: string): string {
  if (!text.includes(':')) return text;
  try {
    const canonical = new SocketAddress({ address: text, family: 'ipv6' }).address;
    return /^::ffff:\d+\.\d+\.\d+\.\d+$/.test(canonical) ? canonical.slice(7) : canonical;
  } catch {
    return text;
  }
}

const decoder = new TextDecoder();
// uWS frames these itself; passing them through would duplicate them.
const framingHeaders = new Set(['content-length', 'transfer-encoding']);

const statusLines = new Map<number, string>();

function statusLine(status: number): string {
  let line = statusLines.get(status);
  if (line === undefined) {
    line = `${status} ${STATUS_CODES[status] ?? 'OK'}`;
    statusLines.set(status, line);
  }
  return line;
}

function writeHead(res: Uws.HttpResponse, status: number, headers: Readonly<Record<string, string>>): void {
  res.writeStatus(statusLine(status));
  for (const [name, value] of Object.entries(headers)) {
    if (!framingHeaders.has(name.toLowerCase())) res.writeHeader(name, value);
  }
}

function readHeaders(req: Uws.HttpRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  req.forEach((name, value) => {
    const previous = headers[name];
    headers[name] = previous === undefined ? value : `${previous}, ${value}`;
  });
  return headers;
}

function framingError(headers: Record<string, string>): string | undefined {
  const length = headers['content-length'];
  if (length !== undefined && !/^\d{1,15}$/.test(length.trim())) {
    return length.includes(',') ? 'The request has more than one Content-Length header.' : `Content-Length "${length.slice(0, 40)}" is not a number of bytes.`;
  }
  if (length !== undefined && headers['transfer-encoding'] !== undefined) return 'The request has both Content-Length and Transfer-Encoding.';
  return undefined;
}

function invalidFraming(error: string): FullResponse {
  return {
    kind: 'full',
    status: 400,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify({ code: 'INVALID', error }),
  };
}

/** One request/response pair; uWS forbids touching `res` after it was aborted or ended. */
class Exchange {
  // Made when first asked for: an open event stream never needs one, and each costs about 1 KB.
  private controller: AbortController | undefined;
  private wasAborted = false;
  done = false;
  stream: UwsStreamSink | undefined;

  constructor(
    readonly res: Uws.HttpResponse,
    private readonly open: Set<Exchange>,
  ) {
    open.add(this);
  }

  aborted(): void {
    if (this.done) return;
    this.finish();
    this.wasAborted = true;
    this.controller?.abort();
    this.stream?.markClosed();
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.wasAborted) this.controller.abort();
    }
    return this.controller.signal;
  }

  finish(): void {
    this.done = true;
    this.open.delete(this);
  }

  sendFull(response: FullResponse, isHead: boolean, closeConnection = false): void {
    if (this.done) return;
    this.finish();
    const body = response.body;
    this.res.cork(() => {
      writeHead(this.res, response.status, response.headers);
      if (isHead) this.res.endWithoutBody(Buffer.byteLength(body), closeConnection);
      else this.res.end(body, closeConnection);
    });
  }

  startStream(response: StreamResponse, maxBufferBytes: number, flushes: FlushScheduler<UwsStreamSink>): void {
    if (this.done) return;
    this.res.cork(() => writeHead(this.res, response.status, response.headers));
    const sink = new UwsStreamSink(this, maxBufferBytes, flushes);
    this.stream = sink;
    try {
      response.start(sink);
    } catch (error) {
      failStream(sink, error, 'stream start');
    }
  }
}

class UwsStreamSink implements StreamSink {
  closed = false;
  private queue: string[] = [];
  private queuedBytes = 0;
  // Upper bound of what uWS holds: bytes passed to writes since the last write that went out whole.
  private heldByUws = 0;
  private backpressured = false;
  private readonly listeners: Array<() => void> = [];

  constructor(
    private readonly exchange: Exchange,
    private readonly maxBufferBytes: number,
    private readonly flushes: FlushScheduler<UwsStreamSink>,
  ) {
    exchange.res.onWritable(() => this.resume());
  }

  write(chunk: string): boolean {
    if (this.closed) return false;
    this.queue.push(chunk);
    this.queuedBytes += Buffer.byteLength(chunk);
    if (this.bufferedBytes() > this.maxBufferBytes) {
      this.exchange.res.close();
      this.exchange.aborted(); // a no-op if uWS already ran onAborted
      return false;
    }
    this.flushes.add(this);
    return true;
  }

  flush(): void {
    if (this.closed || this.backpressured || this.queue.length === 0) return;
    const data = this.takeQueue();
    let sent = false;
    this.exchange.res.cork(() => {
      sent = this.exchange.res.write(data);
    });
    if (sent) {
      this.heldByUws = 0;
    } else {
      this.heldByUws += Buffer.byteLength(data);
      this.backpressured = true;
    }
  }

  end(): void {
    if (this.closed) return;
    const data = this.takeQueue();
    this.exchange.finish();
    // Never end(data, true) here: once the headers are out, uWS writes its
    // "Connection: close" header into the body.
    this.exchange.res.cork(() => this.exchange.res.end(data));
    this.markClosed();
  }

  bufferedBytes(): number {
    return this.queuedBytes + this.heldByUws;
  }

  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.listeners.push(listener);
  }

  markClosed(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue = [];
    this.queuedBytes = 0;
    for (const listener of this.listeners.splice(0)) listener();
  }

  private resume(): boolean {
    if (this.closed) return true;
    this.backpressured = false;
    if (this.queue.length > 0) {
      this.flush();
      return !this.backpressured;
    }
    // With an onWritable handler registered uWS drains its buffer only when
    // something is written; an empty cork flushes it without adding bytes.
    this.exchange.res.cork(() => {});
    return true;
  }

  private takeQueue(): string {
    const data = this.queue.length === 1 ? this.queue[0]! : this.queue.join('');
    this.queue = [];
    this.queuedBytes = 0;
    return data;
  }
}

// Almost every body arrives in the packet that carried the headers, and uWS hands it over
// before this turn ends: the stall timer is armed only for the bodies still incomplete then,
// instead of being made and cleared for every request.
let toArm: Array<() => void> = [];

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
  tooLarge: () => void,
  stalled: (() => void) | undefined,
): void {
  let chunks: Buffer[] = [];
  let total = 0;
  // uWS keeps this handler for as long as the response lives (an event stream: hours), so
  // once the body is whole it lets go of the request it was building.
  let pending: { onBody: (body: Buffer) => void; tooLarge: () => void } | undefined = { onBody, tooLarge };
  // A body that stops arriving is answered 408 before uWS's own idle timeout closes the socket silently.
  let timer: ReturnType<typeof setTimeout> | undefined;
  if (stalled) {
    armAfterThisTurn(() => {
      if (!pending) return;
      timer = setTimeout(() => {
        if (!pending) return;
        pending = undefined;
        chunks = [];
        stalled();
      }, bodyIdleMs);
    });
  }
  res.onData((chunk, isLast) => {
    const handlers = pending;
    if (!handlers) return;
    timer?.refresh();
    total += chunk.byteLength;
    if (total > limit) {
      clearTimeout(timer);
      pending = undefined;
      chunks = [];
      handlers.tooLarge();
      return;
    }
    // uWS neuters the ArrayBuffer when this callback returns: copy it.
    if (chunk.byteLength > 0) chunks.push(Buffer.from(new Uint8Array(chunk)));
    if (isLast) {
      clearTimeout(timer);
      // The usual body, one chunk, is already its own copy.
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
      pending = undefined;
      chunks = [];
      handlers.onBody(body);
    }
  });
}

export class UwsTransport implements HttpTransport {
  readonly name = 'uws';
  private app: Uws.TemplatedApp | undefined;
  private listenSocket: Uws.us_listen_socket | undefined;
  private readonly open = new Set<Exchange>();
  private readonly flushes = new FlushScheduler<UwsStreamSink>();

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
          void probeListen(options.host, options.port).then((code) => reject(listenFailure(options.host, options.port, code ?? 'EADDRINUSE')));
          return;
        }
        this.listenSocket = socket;
        resolve({ port: this.uws.us_socket_local_port(socket) });
      });
    });
  }

  async close(): Promise<void> {
    if (this.listenSocket) this.uws.us_listen_socket_close(this.listenSocket);
    this.listenSocket = undefined;
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
    res.onAborted(() => exchange.aborted());
    // uWS invalidates `req` when this function returns, so read it all now.
    const method = req.getMethod().toUpperCase();
    const path = req.getUrl();
    const query = req.getQuery() ?? '';
    const headers = readHeaders(req);
    const remoteAddress = normalizeRemoteAddress(decoder.decode(res.getRemoteAddressAsText()));
    const isHead = method === 'HEAD';
    const tooLarge = () => exchange.sendFull(options.tooLarge(options.maxBodyBytes), isHead, true);

    // uWS joins repeated headers here and parses no further; node:http refuses these framings, and so do we.
    const framing = framingError(headers);
    if (framing) {
      exchange.sendFull(invalidFraming(framing), isHead, true);
      return;
    }
    if (Number(headers['content-length'] ?? 0) > options.maxBodyBytes) {
      tooLarge();
      return;
    }
    readBody(
      res,
      options.maxBodyBytes,
      (body) => {
        const request: HttpRequest = {
          method,
          path,
          query,
          headers,
          remoteAddress,
          body,
          get signal() {
            return exchange.signal;
          },
        };
        void this.respond(exchange, handler, request, options);
      },
      tooLarge,
      Number(headers['content-length'] ?? 0) > 0 || headers['transfer-encoding'] !== undefined
        ? () => exchange.sendFull(requestTimedOut(), isHead, true)
        : undefined,
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
