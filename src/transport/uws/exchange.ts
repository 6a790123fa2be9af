// One request/response pair on uWS and the event-stream sink written through it.
import type * as Uws from 'uWebSockets.js';
import type { FlushScheduler } from '../flush-scheduler.ts';
import { failStream } from '../internal-error.ts';
import type { FullResponse, StreamChunk, StreamResponse, StreamSink } from '../http-types.ts';
import { chunkBytes, joinChunks } from '../stream-chunks.ts';
import { streamStalledMs } from '../stalled-request.ts';
import { writeHead } from './wire.ts';

/** One request/response pair; uWS forbids touching `res` after it was aborted or ended. */
export class Exchange {
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

export class UwsStreamSink implements StreamSink {
  closed = false;
  private queue: StreamChunk[] = [];
  private queuedBytes = 0;
  // Upper bound of what uWS holds: bytes passed to writes since the last write that went out whole.
  private heldByUws = 0;
  private backpressured = false;
  /** Armed while the socket is backed up: a reader that takes nothing for streamStalledMs is let go. */
  private stalled: ReturnType<typeof setTimeout> | undefined;
  private room: { bytes: number; listener: () => void } | undefined;
  // Made on the first onClose, at its size: an empty array grown by push reserves 17 slots.
  private listeners: Array<() => void> | undefined;

  constructor(
    private readonly exchange: Exchange,
    private readonly maxBufferBytes: number,
    private readonly flushes: FlushScheduler<UwsStreamSink>,
  ) {
    exchange.res.onWritable(() => this.resume());
  }

  write(chunk: StreamChunk): boolean {
    if (this.closed) return false;
    // A chunk larger than the budget still goes out to a reader that has taken all before it.
    const waiting = this.bufferedBytes();
    const size = chunkBytes(chunk);
    if (waiting > 0 && waiting + size > this.maxBufferBytes) {
      this.cut();
      return false;
    }
    this.queue.push(chunk);
    this.queuedBytes += size;
    this.flushes.add(this);
    return true;
  }

  flush(): void {
    if (this.closed) return;
    if (!this.backpressured && this.queue.length > 0) {
      const data = this.takeQueue();
      let sent = false;
      this.exchange.res.cork(() => {
        sent = this.exchange.res.write(data);
      });
      if (sent) {
        this.heldByUws = 0;
      } else {
        this.heldByUws += chunkBytes(data);
        this.backpressured = true;
        this.stalled ??= setTimeout(() => this.cut(), streamStalledMs);
      }
    }
    this.notifyRoom();
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

  abort(): void {
    this.cut();
  }

  bufferedBytes(): number {
    return this.queuedBytes + this.heldByUws;
  }

  hasRoom(bytes: number): boolean {
    return !this.closed && !this.backpressured && this.bufferedBytes() < bytes;
  }

  whenRoom(bytes: number, listener: () => void): void {
    if (this.closed) return;
    this.room = { bytes, listener };
    // The flush at the end of this turn tells it if there is room already.
    this.flushes.add(this);
  }

  onClose(listener: () => void): void {
    if (this.closed) listener();
    else if (this.listeners) this.listeners.push(listener);
    else this.listeners = [listener];
  }

  markClosed(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.stalled);
    this.room = undefined;
    this.queue = [];
    this.queuedBytes = 0;
    const listeners = this.listeners ?? [];
    this.listeners = undefined;
    for (const listener of listeners) listener();
  }

  private cut(): void {
    if (this.closed) return;
    this.exchange.res.close();
    this.exchange.aborted(); // a no-op if uWS already ran onAborted
  }

  private notifyRoom(): void {
    const room = this.room;
    if (!room || !this.hasRoom(room.bytes)) return;
    this.room = undefined;
    room.listener();
  }

  private resume(): boolean {
    if (this.closed) return true;
    this.backpressured = false;
    clearTimeout(this.stalled);
    this.stalled = undefined;
    if (this.queue.length > 0) {
      this.flush();
      return !this.backpressured;
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

  private takeQueue(): StreamChunk {
    const data = joinChunks(this.queue);
    this.queue = [];
    this.queuedBytes = 0;
    return data;
  }
}
