// One request/response pair on uWS and the event-stream sink written through it (queued-sink.ts).
import type * as Uws from 'uWebSockets.js';
import type { FlushScheduler } from '../flush-scheduler.ts';
import { failStream } from '../internal-error.ts';
import type { FullResponse, StreamChunk, StreamResponse } from '../http-types.ts';
import { QueuedSink } from '../queued-sink.ts';
import { chunkBytes } from '../stream-chunks.ts';
import { decoder, normalizeRemoteAddress, writeHead } from './wire.ts';

/** One request/response pair; uWS forbids touching `res` after it was aborted or ended. */
export class Exchange {
  // Made when first asked for: an open event stream never needs one, and each costs about 1 KB.
  private controller: AbortController | undefined;
  private wasAborted = false;
  private address: string | undefined;
  done = false;
  stream: UwsStreamSink | undefined;

  constructor(
    readonly res: Uws.HttpResponse,
    private readonly open: Set<Exchange>,
  ) {
    open.add(this);
    // Registered here, not where the request is read: uWS keeps this handler for as long as
    // the response lives (an event stream: hours), and a closure made there would keep that
    // scope (the request's headers, path and query) alive with it.
    res.onAborted(() => this.aborted());
  }

  aborted(): void {
    if (this.done) return;
    this.finish();
    this.wasAborted = true;
    this.controller?.abort();
    this.stream?.markClosed();
  }

  /** True once the client went away before its reply was sent. */
  get gone(): boolean {
    return this.wasAborted;
  }

  /**
   * The peer's address, asked of uWS when first wanted. uWS forbids touching a response that ended
   * or was aborted; asked only then (a client gone mid-operation), the address is unknown: "".
   */
  remoteAddress(): string {
    if (this.address === undefined) this.address = this.done ? '' : normalizeRemoteAddress(decoder.decode(this.res.getRemoteAddressAsText()));
    return this.address;
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

  startStream(response: StreamResponse, maxBufferBytes: number, flushes: FlushScheduler<QueuedSink>): void {
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

export class UwsStreamSink extends QueuedSink {
  // Upper bound of what uWS holds: bytes passed to writes since the last write that went out whole.
  private heldByUws = 0;

  constructor(
    private readonly exchange: Exchange,
    maxBufferBytes: number,
    flushes: FlushScheduler<QueuedSink>,
  ) {
    super(maxBufferBytes, flushes);
    exchange.res.onWritable(() => this.resume());
  }

  protected send(data: StreamChunk): boolean {
    let sent = false;
    this.exchange.res.cork(() => {
      sent = this.exchange.res.write(data);
    });
    this.heldByUws = sent ? 0 : this.heldByUws + chunkBytes(data);
    return sent;
  }

  protected sendLast(data: StreamChunk): void {
    this.exchange.finish();
    // Never end(data, true) here: once the headers are out, uWS writes its
    // "Connection: close" header into the body.
    this.exchange.res.cork(() => this.exchange.res.end(data));
  }

  protected heldByTransport(): number {
    return this.heldByUws;
  }

  protected cut(): void {
    if (this.closed) return;
    this.exchange.res.close();
    this.exchange.aborted(); // a no-op if uWS already ran onAborted
  }

  private resume(): boolean {
    if (this.closed) return true;
    if (this.writable()) {
      this.flush();
      return !this.backedUp;
    }
    // With an onWritable handler registered uWS drains its buffer only when
    // something is written; an empty cork flushes it without adding bytes.
    this.exchange.res.cork(() => {});
    // The socket takes bytes again: what uWS still holds is within its send buffer
    // (a write that finds it backed up says so, and this waits again).
    this.heldByUws = 0;
    this.notifyRoom();
    return true;
  }
}
