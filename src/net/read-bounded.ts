// Reading a response body someone else controls (a polled URL, a deployed
// worker) without letting its size decide the server's memory.

/** The part of a fetch Response read here (undici's, miniflare's and Node's own differ in their stream types). */
interface BodyReader {
  read(): Promise<{ done: boolean; value?: Uint8Array }>;
  cancel(): Promise<void>;
}

/**
 * Reads at most `limit` bytes of a body, cancelling the rest. `onChunk` sees
 * every byte kept; `truncated` says whether the body had more.
 */
export async function readBounded(
  response: { readonly body: { getReader(): BodyReader } | null },
  limit: number,
  onChunk: (chunk: Uint8Array) => void,
): Promise<{ bytes: number; truncated: boolean }> {
  if (!response.body) return { bytes: 0, truncated: false };
  const reader = response.body.getReader();
  let bytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || !value) return { bytes, truncated: false };
      const room = limit - bytes;
      onChunk(value.length > room ? value.subarray(0, room) : value);
      bytes += Math.min(value.length, room);
      if (value.length >= room) {
        const more = value.length > room || !(await reader.read()).done;
        return { bytes, truncated: more };
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
