// One event stream (protocol.md §11) read from a raw socket: the HTTP/1.1
// response head, chunked transfer decoding, and just enough of the SSE format
// to know each event's id and type. Data lines are skipped, never decoded:
// with 10,000 streams on a shared machine the reader's cost per delivery
// decides what is measured. Every read of a thread lands in one reused buffer.
import net from 'node:net';
import { nowMs } from './clock.ts';

export interface StreamAddress {
  host: string;
  port: number;
  /** Path and query, e.g. /mp/v0/subscriptions/s1/stream?cursor=5. */
  path: string;
  token: string;
}

export interface StreamHandlers {
  /** The server answered 200 with an event stream. */
  opened(at: number): void;
  /** An event with an id (not a heartbeat or an error). */
  event(id: string, at: number): void;
  /** The stream ended: refused (`status` ≠ 200), cut by the server, or closed here. */
  closed(reason: string, status: number): void;
}

const readBuffer = Buffer.allocUnsafe(256 * 1024);

type BodyState = { kind: 'plain' } | { kind: 'size'; digits: string } | { kind: 'data'; left: number } | { kind: 'crlf'; left: number };

export class SseStream {
  private socket: net.Socket | undefined;
  private head = '';
  private status = 0;
  private body: BodyState | undefined;
  private line = '';
  private eventType = '';
  private eventId: string | undefined;
  private hasData = false;
  private errorData = '';
  private ended = false;
  /** The id of the last event received: sent as Last-Event-ID on a reconnect. */
  lastId: string | undefined;
  /** The reconnection time the server asked for (`retry:`), ms; EventSource's usual 3 s until it says. */
  retryMs = 3000;
  private headTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly address: StreamAddress,
    private readonly handlers: StreamHandlers,
  ) {}

  /** `timeoutMs`: a stream whose answer has not begun by then is given up (and reported closed). */
  open(lastEventId?: string, timeoutMs = 30_000): void {
    this.reset();
    const { host, port, path, token } = this.address;
    // Events of a socket this stream has closed (its close arrives later) are not this stream's any more.
    const socket: net.Socket = net.connect({ host, port, onread: { buffer: readBuffer, callback: (n: number) => socket === this.socket && this.read(n) } });
    this.socket = socket;
    socket.setNoDelay(true);
    this.headTimer = setTimeout(() => {
      if (socket === this.socket && this.body === undefined) this.end('no answer in time', 0);
    }, timeoutMs);
    this.headTimer.unref();
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n` +
        `${lastEventId !== undefined ? `Last-Event-ID: ${lastEventId}\r\n` : ''}Connection: keep-alive\r\n\r\n`,
    );
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (socket === this.socket) this.end(error.code ?? error.message, 0);
    });
    socket.on('close', () => {
      if (socket === this.socket) this.end(this.status === 200 ? 'closed by the server' : 'closed before an answer', this.status);
    });
  }

  /** Closes the socket; `closed` is not called for a close asked for here. */
  close(): void {
    clearTimeout(this.headTimer);
    this.ended = true;
    this.socket?.destroy();
    this.socket = undefined;
  }

  private reset(): void {
    this.head = '';
    this.status = 0;
    this.body = undefined;
    this.line = '';
    this.eventType = '';
    this.eventId = undefined;
    this.hasData = false;
    this.errorData = '';
    this.ended = false;
  }

  private end(reason: string, status: number): void {
    if (this.ended) return;
    clearTimeout(this.headTimer);
    this.ended = true;
    this.socket?.destroy();
    this.socket = undefined;
    this.handlers.closed(this.errorData ? `${reason}: ${this.errorData.slice(0, 200)}` : reason, status);
  }

  private read(n: number): boolean {
    if (this.ended) return false;
    const at = nowMs();
    let text = readBuffer.toString('latin1', 0, n);
    if (this.body === undefined) {
      this.head += text;
      const end = this.head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (this.head.length > 16_384) this.end('response head too long', 0);
        return true;
      }
      const headText = this.head.slice(0, end);
      text = this.head.slice(end + 4);
      this.head = '';
      this.status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(headText)?.[1] ?? 0);
      if (this.status !== 200 || !/\r\ncontent-type:\s*text\/event-stream/i.test(headText)) {
        this.errorData = text.slice(0, 200);
        this.end(this.status === 200 ? 'not an event stream' : `HTTP ${this.status}`, this.status);
        return false;
      }
      this.body = /\r\ntransfer-encoding:\s*chunked/i.test(headText) ? { kind: 'size', digits: '' } : { kind: 'plain' };
      clearTimeout(this.headTimer);
      this.handlers.opened(at);
    }
    this.decode(text, at);
    return true;
  }

  /** Chunked transfer decoding over latin1 text (one character per byte). */
  private decode(text: string, at: number): void {
    const body = this.body!;
    if (body.kind === 'plain') {
      this.parse(text, at);
      return;
    }
    let i = 0;
    while (i < text.length && !this.ended) {
      const state = this.body!;
      if (state.kind === 'size') {
        const nl = text.indexOf('\n', i);
        if (nl < 0) {
          state.digits += text.slice(i);
          return;
        }
        const size = Number.parseInt((state.digits + text.slice(i, nl)).trim().split(';')[0]!, 16);
        i = nl + 1;
        if (!Number.isFinite(size) || size === 0) {
          this.end(size === 0 ? 'closed by the server' : 'bad chunk size', this.status);
          return;
        }
        this.body = { kind: 'data', left: size };
      } else if (state.kind === 'data') {
        const take = Math.min(state.left, text.length - i);
        this.parse(text.slice(i, i + take), at);
        i += take;
        state.left -= take;
        if (state.left === 0) this.body = { kind: 'crlf', left: 2 };
      } else if (state.kind === 'crlf') {
        const take = Math.min(state.left, text.length - i);
        i += take;
        state.left -= take;
        if (state.left === 0) this.body = { kind: 'size', digits: '' };
      }
    }
  }

  /** The SSE fields the bench needs: id, event, and whether data came; a blank line ends an event. */
  private parse(text: string, at: number): void {
    let from = 0;
    for (;;) {
      const nl = text.indexOf('\n', from);
      if (nl < 0) {
        // Only the start of a line says which field it is: a long data line is not kept whole.
        if (this.line.length < 64) this.line += text.slice(from, from + 64);
        return;
      }
      const line = this.line.length > 0 ? this.line + text.slice(from, Math.min(nl, from + 64)) : text.slice(from, Math.min(nl, from + 512));
      this.line = '';
      from = nl + 1;
      this.field(line.endsWith('\r') ? line.slice(0, -1) : line, at);
    }
  }

  private field(line: string, at: number): void {
    if (line === '') {
      // As EventSource does, the last event id moves when the event is complete.
      if (this.eventId !== undefined) this.lastId = this.eventId;
      if (this.hasData && this.eventId !== undefined && this.eventType !== 'heartbeat' && this.eventType !== 'error') this.handlers.event(this.eventId, at);
      this.eventType = '';
      this.eventId = undefined;
      this.hasData = false;
      return;
    }
    if (line.startsWith('data:')) {
      this.hasData = true;
      if (this.eventType === 'error') this.errorData += line.slice(5).trim();
    } else if (line.startsWith('id:')) {
      this.eventId = line.slice(3).trim();
    } else if (line.startsWith('event:')) this.eventType = line.slice(6).trim();
    else if (line.startsWith('retry:')) {
      const ms = Number(line.slice(6).trim());
      if (Number.isSafeInteger(ms) && ms >= 0) this.retryMs = ms;
    }
  }
}
