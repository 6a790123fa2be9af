// A fetch and the reading of its answer under one time limit that holds the
// process until they end or the limit passes. AbortSignal.timeout's timer does
// not hold it, and a fetch whose server was killed under it can be left
// holding no handle (undici, Node 20): a command waiting on one exited at once
// with 13, "unsettled top-level await", having said nothing.
import { linkedSignal } from '../timing/linked-signal.ts';

/** `read` gets the answer while the limit still runs; past it, the fetch or the read rejects with a TimeoutError. */
export async function fetchWithin<T>(url: string, init: Omit<RequestInit, 'signal'>, limitMs: number, read: (response: Response) => Promise<T>): Promise<T> {
  const limit = linkedSignal([], limitMs);
  try {
    return await read(await fetch(url, { ...init, signal: limit.signal }));
  } finally {
    limit.dispose();
  }
}

/** The answer and its text, read within the limit. */
export const fetchTextWithin = (url: string, init: Omit<RequestInit, 'signal'>, limitMs: number): Promise<{ response: Response; text: string }> =>
  fetchWithin(url, init, limitMs, async (response) => ({ response, text: await response.text() }));
