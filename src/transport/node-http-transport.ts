// HttpTransport over node:http. The only module that touches node:http servers.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { FlushScheduler } from './flush-scheduler.ts';
import { failStream, internalErrorResponse } from './internal-error.ts';
import { listenFailure } from './listen-failure.ts';
import { bodyIdleMs, declaredTooLargeGraceMs, headersTimeoutMs, requestTimedOut, requestTimeoutMs } from './stalled-request.ts';
import { QueuedSink } from './queued-sink.ts';
import type {
  FullResponse,
  HttpHandler,
  HttpRequest,
  HttpTransport,
  ListenOptions,
  StreamChunk,
  StreamResponse,
} from './http-types.ts';
import { headOf } from './http-types.ts';


/** How long an answer to a refused connection may take to leave before the socket is destroyed anyway. */
const lastWordsMs = 2000;

/**
 * Writes a last answer and lets the connection go for good. `end()` alone only half-closes it: a client that
 * never closes its side (half of its headers sent, then silence) kept the server's socket in FIN-WAIT-2 with
 * its descriptor held until the client went away.
 */
function answerAndClose(socket: Duplex, text: string): void {
  const cut = setTimeout(() => socket.destroy(), lastWordsMs);
  cut.unref();
  socket.end(text, () => {
    clearTimeout(cut);
    socket.destroy();
  });
}

function readHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, values] of Object.entries(req.headersDistinct)) {
    if (values) headers[name] = values.join(', ');
  }
  return headers;
}

function remoteAddressOf(req: IncomingMessage): string {
  const address = req.socket.remoteAddress ?? '';
  // A dual-stack listener reports IPv4 peers as IPv4-mapped IPv6.
  return /^::ffff:\d+\.\d+\.\d+\.\d+$/.test(address) ? address.slice(7) : address;
}

function sendFull(res: ServerResponse, response: FullResponse, closeConnection = false): void {
  if (res.destroyed || res.headersSent) return;
  const headers = closeConnection ? { ...response.headers, connection: 'close' } : response.headers;
  res.writeHead(response.status, headers);
  res.end(response.body);
}

/** Collects the body, or calls `tooLarge` as soon as it passes the limit, or `stalled` when it stops arriving. */
function readBody(req: IncomingMessage, limit: number, onBody: (body: Buffer) => void, tooLarge: (head: Buffer) => void, stalled: () => void): void {
  const chunks: Buffer[] = [];
  let total = 0;
  const declared = Number(req.headers['content-length'] ?? 0);
  const expectsBody = declared > 0 || req.headers['transfer-encoding'] !== undefined;
  const timer = expectsBody ? setTimeout(() => stop(stalled), bodyIdleMs) : undefined;
  // A body declared too large is refused on its first bytes, kept for the reply (a JSON-RPC id).
  const declaredTooLarge = declared > limit;
  const grace = declaredTooLarge ? setTimeout(() => stop(() => tooLarge(Buffer.alloc(0))), declaredTooLargeGraceMs) : undefined;
  const stop = (then: () => void) => {
    clearTimeout(timer);
    clearTimeout(grace);
    req.off('data', onData);
    req.off('end', onEnd);
    then();
  };
  const onData = (chunk: Buffer) => {
    timer?.refresh();
    total += chunk.byteLength;
    if (total > limit || declaredTooLarge) return stop(() => tooLarge(headOf([...chunks, chunk])));
    chunks.push(chunk);
  };
  const onEnd = () => {
    clearTimeout(timer);
    clearTimeout(grace);
    onBody(Buffer.concat(chunks, total));
  };
  req.on('data', onData);
  req.on('end', onEnd);
}

class NodeStreamSink extends QueuedSink {
  constructor(
    private readonly res: ServerResponse,
    maxBufferBytes: number,
    flushes: FlushScheduler<QueuedSink>,
  ) {
    super(maxBufferBytes, flushes);
    res.once('close', () => this.markClosed());
    res.on('drain', () => {
      if (this.writable()) this.flushes.add(this);
      else this.notifyRoom();
    });
  }

  // String length, not bytes: counted once per frame per stream, it must stay cheap; the budget is approximate anyway.
  protected override sizeOf(chunk: StreamChunk): number {
    return typeof chunk === 'string' ? chunk.length : chunk.byteLength;
  }

  protected send(data: StreamChunk): boolean {
    return this.res.write(data);
  }

  protected sendLast(data: StreamChunk): void {
    this.res.end(data);
  }

  // node:http would buffer a reader that stopped reading without limit: this connection's budget ends it.
  protected heldByTransport(): number {
    return this.res.writableLength;
  }

  protected cut(): void {
    this.res.destroy();
    this.markClosed();
  }
}

export class NodeHttpTransport implements HttpTransport {
  readonly name = 'node';
  private server: Server | undefined;
  private readonly streams = new Set<NodeStreamSink>();
  private readonly flushes = new FlushScheduler<QueuedSink>();

  listen(handler: HttpHandler, options: ListenOptions): Promise<{ port: number }> {
    const server = createServer(
      // Half-sent requests must not hold a descriptor for minutes: headers get seconds, the whole request a minute
      // (bodies that stop arriving are answered 408 sooner, see readBody), checked every second.
      { keepAlive: true, headersTimeout: headersTimeoutMs, requestTimeout: requestTimeoutMs, connectionsCheckingInterval: 1000 },
      (req, res) => this.accept(req, res, handler, options),
    );
    // node:http's headersTimeout starts at a connection's first byte: one that never sends any would be held for
    // good (1,000 of them held 1,035 descriptors). It gets the same seconds as headers do (uWS closes it at ~12 s).
    server.on('connection', (socket) => {
      const silent = setTimeout(() => {
        if (socket.bytesRead === 0) socket.destroy();
      }, headersTimeoutMs);
      silent.unref();
      socket.once('close', () => clearTimeout(silent));
    });
    // A request node's parser rejects (oversized headers or URL, bad framing) still gets the protocol's error body.
    server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
      if (!socket.writable) return socket.destroy();
      if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
        const timedOut = requestTimedOut();
        answerAndClose(
          socket,
          `HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(timedOut.body)}\r\nconnection: close\r\n\r\n${timedOut.body}`,
        );
        return;
      }
      const body = JSON.stringify({
        code: 'INVALID',
        error: error.code === 'HPE_HEADER_OVERFLOW' ? 'The request line or headers are too large.' : 'The request could not be parsed as HTTP/1.1.',
      });
      answerAndClose(
        socket,
        `HTTP/1.1 400 Bad Request\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
    });
    this.server = server;
    return new Promise((resolve, reject) => {
      const failed = (error: NodeJS.ErrnoException) => reject(listenFailure(options.host, options.port, error.code, options.portFlag));
      server.once('error', failed);
      server.listen({ port: options.port, host: options.host, exclusive: true }, () => {
        server.off('error', failed);
        const address = server.address();
        resolve({ port: typeof address === 'object' && address ? address.port : options.port });
      });
    });
  }

  private closed: Promise<void> | undefined;

  stopListening(): void {
    const server = this.server;
    if (server && !this.closed) this.closed = new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.stopListening();
    this.server = undefined;
    const closed = this.closed!;
    for (const stream of [...this.streams]) stream.end();
    server.closeAllConnections();
    await closed;
  }

  private accept(req: IncomingMessage, res: ServerResponse, handler: HttpHandler, options: ListenOptions): void {
    const controller = new AbortController();
    // A client that closed its side (FIN: it gave up) is gone as well: node:http does not half-open, and a
    // write it sent must not run (src/service/operations.ts). Seen at once, not when the socket closes later.
    const socket = req.socket;
    const clientClosed = () => controller.abort();
    socket.once('end', clientClosed);
    res.once('finish', () => socket.off('end', clientClosed));
    res.once('close', () => {
      socket.off('end', clientClosed);
      if (!res.writableFinished) controller.abort();
    });
    const [path = '', query = ''] = splitUrl(req.url ?? '/');
    const tooLarge = (head: Buffer) => sendFull(res, options.tooLarge(options.maxBodyBytes, { path, head }), true);

    readBody(
      req,
      options.maxBodyBytes,
      (body) => {
        const request: HttpRequest = {
          method: (req.method ?? 'GET').toUpperCase(),
          path,
          query,
          headers: readHeaders(req),
          remoteAddress: remoteAddressOf(req),
          body,
          signal: controller.signal,
          clientGone: () => controller.signal.aborted,
        };
        void this.respond(res, handler, request, options);
      },
      tooLarge,
      () => sendFull(res, requestTimedOut(), true),
    );
  }

  private async respond(res: ServerResponse, handler: HttpHandler, request: HttpRequest, options: ListenOptions) {
    let response: Awaited<ReturnType<HttpHandler>>;
    try {
      response = await handler(request);
    } catch (error) {
      response = internalErrorResponse(error, `${request.method} ${request.path}`);
    }
    if (response.kind === 'full') sendFull(res, response);
    else this.startStream(res, response, options.maxStreamBufferBytes);
  }

  private startStream(res: ServerResponse, response: StreamResponse, maxBufferBytes: number): void {
    if (res.destroyed) return;
    res.writeHead(response.status, response.headers);
    res.flushHeaders();
    const sink = new NodeStreamSink(res, maxBufferBytes, this.flushes);
    this.streams.add(sink);
    sink.onClose(() => this.streams.delete(sink));
    try {
      response.start(sink);
    } catch (error) {
      failStream(sink, error, 'stream start');
    }
  }
}

function splitUrl(url: string): [string, string] {
  const mark = url.indexOf('?');
  return mark === -1 ? [url, ''] : [url.slice(0, mark), url.slice(mark + 1)];
}

export function createNodeHttpTransport(): NodeHttpTransport {
  return new NodeHttpTransport();
}
