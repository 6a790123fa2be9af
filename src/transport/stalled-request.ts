// Limits for requests that stop arriving half way (issue 15): a client that
// sends part of its headers or body and goes quiet gets a 408 within seconds
// and its connection is closed, instead of holding a descriptor for minutes.
import type { FullResponse } from './http-types.ts';

/** Headers must be complete this long after the connection sent its first byte (node:http). */
export const headersTimeoutMs = 10_000;
/** The whole request, headers and body, must arrive within this (node:http). */
export const requestTimeoutMs = 60_000;
/** A body with no new bytes for this long is abandoned (below uWS's own 10 s idle close). */
export const bodyIdleMs = 8_000;

/**
 * An event stream whose connection takes no bytes for this long while some wait
 * is closed (the reader stopped reading; it resumes with Last-Event-ID). uWS
 * closes such a socket after about 10 s on its own; node:http never would.
 */
export const streamStalledMs = 10_000;

/**
 * A body declared larger than the limit is refused on its first bytes (kept
 * for the reply: a JSON-RPC call's id), or after this long if none come.
 */
export const declaredTooLargeGraceMs = 250;

export function requestTimedOut(): FullResponse & { body: string } {
  return {
    kind: 'full',
    status: 408,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify({
      code: 'INVALID',
      error: `The request stopped arriving before it was complete: headers must arrive within ${headersTimeoutMs / 1000} s, a body may not pause for ${bodyIdleMs / 1000} s, and the whole request must arrive within ${requestTimeoutMs / 1000} s.`,
    }),
  };
}
