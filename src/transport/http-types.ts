// The one small interface between the socket libraries and everything else.
// Handlers see plain requests and return plain replies; only the adapter
// modules (uws-transport.ts, node-http-transport.ts) know a socket library.

export interface HttpRequest {
  /** Upper-case method, e.g. "GET". */
  readonly method: string;
  /** Raw path without the query string, e.g. "/mp/v0/monitors/abc". Not decoded. */
  readonly path: string;
  /** Raw query string without the leading "?", "" when absent. */
  readonly query: string;
  /** Header names lower-cased; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * Textual IP of the peer ("127.0.0.1", "::1", ...). Read it while the request is open: uWS asks the
   * kernel only when it is read, and cannot once the reply was sent or the client left ("" then).
   */
  readonly remoteAddress: string;
  /** The whole body; the transport has already enforced the size limit. */
  readonly body: Buffer;
  /** Aborted when the client disconnects before the reply is sent. */
  readonly signal: AbortSignal;
  /** Whether the client has disconnected: what `signal.aborted` says, without making a signal (uWS makes one only when asked). */
  clientGone?(): boolean;
}

export interface FullResponse {
  readonly kind: 'full';
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | Buffer;
}

/** A long-lived reply (server-sent events). */
export interface StreamResponse {
  readonly kind: 'stream';
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** Called once the status and headers are on the wire. */
  start(sink: StreamSink): void;
}

export type HttpResponse = FullResponse | StreamResponse;

/**
 * Text, or its UTF-8 bytes when the same chunk goes to many streams: encoded
 * once, a shared chunk is not re-encoded for every connection it is written to.
 */
export type StreamChunk = string | Uint8Array;

export interface StreamSink {
  /**
   * Queues a chunk. Chunks queued during one event-loop turn go out as one
   * socket write. Returns false when the connection is closed or when the
   * unsent buffer passed the transport's per-stream limit, in which case the
   * transport has closed the stream (the client resumes with Last-Event-ID).
   */
  write(chunk: StreamChunk): boolean;
  /** Flushes what is queued and closes the response. Safe to call twice. */
  end(): void;
  /**
   * Closes the connection at once, without ending the response: what is queued
   * is dropped and the client sees the answer cut short (a relayed body that
   * went past its limit, or whose source failed). Safe to call twice.
   */
  abort(): void;
  readonly closed: boolean;
  /** Bytes queued or held by the socket library and not yet sent. */
  bufferedBytes(): number;
  /** True while the connection takes bytes as they come: not backed up, and less than `room` bytes waiting. */
  hasRoom(room: number): boolean;
  /**
   * Calls `listener` once, as soon as hasRoom(room) holds again (at the end of
   * this turn if it already does). Never called once the stream is closed.
   */
  whenRoom(room: number, listener: () => void): void;
  /** Called once when the stream closes for any reason. */
  onClose(listener: () => void): void;
}

export type HttpHandler = (request: HttpRequest) => HttpResponse | Promise<HttpResponse>;

export interface ListenOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** Larger bodies get `tooLarge(maxBodyBytes, refused)` without being read whole. */
  readonly maxBodyBytes: number;
  /** A stream whose unsent bytes pass this is closed. */
  readonly maxStreamBufferBytes: number;
  readonly tooLarge: (limitBytes: number, refused: RefusedBody) => FullResponse;
  /** The flag a person changes to pick another port, named when the port is taken (default --port). */
  readonly portFlag?: string;
}

/** A request refused for its body's size: its path and the first bytes of its body that had arrived (at most refusedHeadBytes). */
export interface RefusedBody {
  readonly path: string;
  readonly head: Buffer;
}

/** How much of a refused body is kept (a JSON-RPC call's id sits near its start). */
export const refusedHeadBytes = 4096;

/** The first refusedHeadBytes of `chunks`. */
export function headOf(chunks: readonly Buffer[]): Buffer {
  const kept: Buffer[] = [];
  let bytes = 0;
  for (const chunk of chunks) {
    if (bytes >= refusedHeadBytes) break;
    kept.push(chunk.subarray(0, refusedHeadBytes - bytes));
    bytes += kept.at(-1)!.byteLength;
  }
  return Buffer.concat(kept, bytes);
}

export interface HttpTransport {
  readonly name: 'uws' | 'node';
  listen(handler: HttpHandler, options: ListenOptions): Promise<{ port: number }>;
  /** Stops accepting connections; open ones stay, so requests in progress are still answered. */
  stopListening(): void;
  /** Stops listening and closes every open connection, streams included. */
  close(): Promise<void>;
}
