// A worker's answer relayed to its client as it arrives, never held whole:
// a chunk is read from workerd only while the client's connection has room
// (back-pressure reaches the worker through the socket between them), bytes
// are counted as they pass and the connection is cut at the size limit. 40
// clients of a worker answering 31 MB each took the server from 130 MB to
// 3.4 GB when answers were read whole first (issue 42).
import type { StreamSink } from '../../transport/http-types.ts';

/** Bytes a client may have waiting on its connection before the next chunk is read from the worker. */
export const relayRoomBytes = 256 << 10;
/** The most written to the connection at once. */
const pieceBytes = 64 << 10;

/** The part of a fetch body read here (miniflare's undici stream). */
export interface BodyReader {
  read(): Promise<{ done: boolean; value?: Uint8Array }>;
  cancel(): Promise<void>;
}

/** How a relay ended: the answer sent whole, or why it was cut. */
export type RelayEnd =
  | { kind: 'sent'; bytes: number }
  /** The client went away (or its connection's own budget closed it). */
  | { kind: 'client-gone'; bytes: number }
  /** The answer went past `maxBytes`: the client's connection was cut there. */
  | { kind: 'too-large'; bytes: number }
  /** The deadline passed while the worker was producing the body. */
  | { kind: 'worker-late'; bytes: number }
  /** The deadline passed while the client was not taking what was sent. */
  | { kind: 'client-late'; bytes: number }
  /** The worker's stream failed or its runtime was stopped. */
  | { kind: 'failed'; bytes: number; error: Error };

export interface RelayLimits {
  readonly maxBytes: number;
  /** When the whole answer must have been sent (ms since the epoch). */
  readonly deadlineMs: number;
  /** Tells when the worker's runtime is stopped under the answer; returns the function that stops listening. */
  readonly onStopped: (listener: (error: Error) => void) => () => void;
}

/** Relays `reader` into `sink` under back-pressure; always cancels the reader and ends or cuts the sink. */
export async function relayBody(reader: BodyReader, sink: StreamSink, limits: RelayLimits): Promise<RelayEnd> {
  let bytes = 0;
  // One listener each for the deadline, the client and the runtime, made once: racing promises that outlive
  // each read would keep every chunk read alive until they settle.
  type Interrupt = 'late' | 'closed' | { error: Error };
  let interrupted: Interrupt | undefined;
  let wake: ((why: Interrupt) => void) | undefined;
  const interrupt = (why: Interrupt) => {
    interrupted ??= why;
    wake?.(interrupted);
  };
  const timer = setTimeout(() => interrupt('late'), Math.max(0, limits.deadlineMs - Date.now()));
  sink.onClose(() => interrupt('closed'));
  const unlisten = limits.onStopped((error) => interrupt({ error }));
  const within = <T>(work: Promise<T>) =>
    new Promise<T | 'late' | 'closed'>((resolve, reject) => {
      const settle = (then: () => void) => {
        wake = undefined;
        then();
      };
      wake = (why) => settle(() => (typeof why === 'string' ? resolve(why) : reject(why.error)));
      if (interrupted) return wake(interrupted);
      work.then(
        (value) => settle(() => resolve(value)),
        (error: unknown) => settle(() => reject(error)),
      );
    });
  try {
    for (;;) {
      const next = await within(reader.read());
      if (next === 'closed') return { kind: 'client-gone', bytes };
      if (next === 'late') {
        sink.abort();
        return { kind: 'worker-late', bytes };
      }
      if (next.done || !next.value) {
        sink.end();
        return { kind: 'sent', bytes };
      }
      const chunk = next.value;
      if (bytes + chunk.byteLength > limits.maxBytes) {
        sink.abort();
        return { kind: 'too-large', bytes };
      }
      // In pieces, each written only while the connection has room: a large chunk never passes its buffer's budget.
      for (let at = 0; at < chunk.byteLength; at += pieceBytes) {
        if (!sink.hasRoom(relayRoomBytes)) {
          const room = await within(new Promise<'room'>((resolve) => sink.whenRoom(relayRoomBytes, () => resolve('room'))));
          if (room === 'closed') return { kind: 'client-gone', bytes };
          if (room === 'late') {
            sink.abort();
            return { kind: 'client-late', bytes };
          }
        }
        const piece = chunk.subarray(at, at + pieceBytes);
        if (!sink.write(piece)) return { kind: 'client-gone', bytes };
        bytes += piece.byteLength;
      }
    }
  } catch (error) {
    sink.abort();
    return { kind: 'failed', bytes, error: error as Error };
  } finally {
    clearTimeout(timer);
    unlisten();
    reader.cancel().catch(() => undefined);
  }
}
