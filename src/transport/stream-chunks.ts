// What a stream sink queued during one event-loop turn, made into the one
// chunk it writes (one HTTP chunk, one socket write).
import type { StreamChunk } from './http-types.ts';

/**
 * One queued chunk goes out as it is: the bytes a caught-up stream shares with
 * thousands of others are never copied per stream. Several are joined (text
 * as text; a copy only when bytes are among them).
 */
export function joinChunks(chunks: readonly StreamChunk[]): StreamChunk {
  if (chunks.length === 1) return chunks[0]!;
  if (chunks.every((chunk) => typeof chunk === 'string')) return chunks.join('');
  return Buffer.concat(chunks.map((chunk) => (typeof chunk === 'string' ? Buffer.from(chunk) : chunk)));
}

export function chunkBytes(chunk: StreamChunk): number {
  return typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
}
