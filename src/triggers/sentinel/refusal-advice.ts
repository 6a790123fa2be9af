// What a sentinel says when the server refuses it in a way that retrying
// alone cannot fix, and how long it waits before the next try: refusals
// back off 1, 2, 4 … 60 s (each refused subscribe is recorded on the monitor
// as a rejection, so a retry every second fills it); a server that cannot be
// reached or is busy is tried again every second.
import { codeOf } from '../../server-client/protocol-client.ts';

export const maxBackoffMs = 60_000;

/** Refusals that stay refusals until someone changes the monitor, the token or the recipe. */
const lasting = new Set(['CAPABILITY_MISSING', 'UNAUTHORIZED', 'NOT_FOUND', 'INVALID', 'UNKNOWN_VOCABULARY', 'FORBIDDEN', 'ORIGIN_REFUSED']);

export function isLastingRefusal(error: unknown): boolean {
  const code = codeOf(error);
  return code !== undefined && lasting.has(code);
}

/** The wait before try `failures` (1-based) after a lasting refusal. */
export function backoffMs(failures: number): number {
  return Math.min(maxBackoffMs, 1000 * 2 ** Math.max(0, failures - 1));
}

/** What to change, in the words of the recipe and the docs (docs/triggers.md, "What a sentinel needs"). */
export function adviceFor(error: unknown, monitor: string, file: string): string {
  switch (codeOf(error)) {
    case 'CAPABILITY_MISSING':
      return (
        `a sentinel subscribes with "observe" and "act" (it leases subjects), and monitor "${monitor}" does not grant "act" to watch.token. ` +
        `Create the monitor with "capabilities": ["observe", "act"], or add it with the owner token: ` +
        `POST /mp/v0/monitors/${monitor}/update {"reason": "sentinel", "patch": {"capabilities": ["observe", "act"]}}; ` +
        `watch.token (${file}) must be the monitor's owner or subscribe token, or "act" must be in its default_grant`
      );
    case 'UNAUTHORIZED':
      return `the server does not accept watch.token of ${file} (nor server.token of vigil.yml): give it the owner or subscribe token of monitor "${monitor}"`;
    case 'NOT_FOUND':
      return `no monitor "${monitor}" is visible to watch.token: create it, or check watch.monitor and watch.base of ${file}`;
    default:
      return `check watch of ${file}`;
  }
}
