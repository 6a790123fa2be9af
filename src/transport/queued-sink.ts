// The event-stream sink both transports write through: what a stream writes in
// one event-loop turn is queued and goes out as one socket write at the end of
// it (FlushScheduler); while the socket is backed up nothing more is handed to
// the transport, so pending frames stay queued as the chunks every stream
// shares instead of one encoded copy per connection. A reader past its buffer
// budget, or one that takes nothing for streamStalledMs, is let go.
import type { FlushScheduler } from './flush-scheduler.ts';
import type { StreamChunk, StreamSink } from './http-types.ts';
import { streamStalledMs } from './stalled-request.ts';
import { chunkBytes, joinChunks } from './stream-chunks.ts';

export abstract class QueuedSink implements StreamSink {
  closed = false;
  private queue: StreamChunk[] = [];
  private queuedBytes = 0;
  private backpressured = false;
  /** Armed while the socket is backed up: a reader that takes nothing for streamStalledMs is let go. */
  private stalled: ReturnType<typeof setTimeout> | undefined;
  private room: { bytes: number; listener: () => void } | undefined;
  // Made on the first onClose, at its size: an empty array grown by push reserves 17 slots.
  private listeners: Array<() => void> | undefined;

  constructor(
    private readonly maxBufferBytes: number,
    protected readonly flushes: FlushScheduler<QueuedSink>,
  ) {}

  /** Hands data to the transport; false when the socket is backed up (the transport holds the rest). */
  protected abstract send(data: StreamChunk): boolean;
  /** Hands the last data to the transport and ends the response. */
  protected abstract sendLast(data: StreamChunk): void;
  /** Bytes the transport holds that the socket has not taken yet. */
  protected abstract heldByTransport(): number;
  /** Closes the connection at once; markClosed() follows. */
  protected abstract cut(): void;

  /** What a chunk counts against the buffer budget. */
  protected sizeOf(chunk: StreamChunk): number {
    return chunkBytes(chunk);
  }

  write(chunk: StreamChunk): boolean {
    if (this.closed) return false;
    // A chunk larger than the budget still goes out to a reader that has taken all before it.
    const waiting = this.bufferedBytes();
    const size = this.sizeOf(chunk);
    if (waiting > 0 && waiting + size > this.maxBufferBytes) {
      this.cut();
      return false;
    }
    this.queue.push(chunk);
    this.queuedBytes += size;
    if (!this.backpressured) this.flushes.add(this);
    return true;
  }

  flush(): void {
    if (this.closed) return;
    if (!this.backpressured && this.queue.length > 0 && !this.send(this.takeQueue())) {
      this.backpressured = true;
      this.stalled ??= setTimeout(() => this.cut(), streamStalledMs);
    }
    this.notifyRoom();
  }

  end(): void {
    if (this.closed) return;
    this.sendLast(this.takeQueue());
    this.markClosed();
  }

  abort(): void {
    if (this.closed) return;
    this.cut();
  }

  bufferedBytes(): number {
    return this.queuedBytes + this.heldByTransport();
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

  /** The socket takes bytes again. Returns whether something is still queued (the transport decides when it goes). */
  protected writable(): boolean {
    this.backpressured = false;
    clearTimeout(this.stalled);
    this.stalled = undefined;
    return this.queue.length > 0;
  }

  /** Whether the last send found the socket backed up. */
  protected get backedUp(): boolean {
    return this.backpressured;
  }

  protected notifyRoom(): void {
    const room = this.room;
    if (!room || !this.hasRoom(room.bytes)) return;
    this.room = undefined;
    room.listener();
  }

  private takeQueue(): StreamChunk {
    const data = joinChunks(this.queue);
    this.queue = [];
    this.queuedBytes = 0;
    return data;
  }
}
