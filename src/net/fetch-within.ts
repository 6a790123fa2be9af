// A fetch and the reading of its answer under one time limit, a limit that
// holds the process until they end (timing/linked-signal.ts says why; the
// timer of AbortSignal.timeout does not hold it).
import { linkedSignal } from '../timing/linked-signal.ts';

/**
 * `read` gets the answer while the limit still runs; past it, the fetch or the read rejects with a
 * TimeoutError. `init.signal`, when given, cuts both short too (they reject with its reason).
 */
export async function fetchWithin<T>(url: string, init: RequestInit, limitMs: number, read: (response: Response) => Promise<T>): Promise<T> {
  const limit = linkedSignal(init.signal ? [init.signal] : [], limitMs);
  try {
    return await read(await fetch(url, { ...init, signal: limit.signal }));
  } finally {
    limit.dispose();
  }
}

/** The answer and its text, read within the limit. */
export const fetchTextWithin = (url: string, init: RequestInit, limitMs: number): Promise<{ response: Response; text: string }> =>
  fetchWithin(url, init, limitMs, async (response) => ({ response, text: await response.text() }));
