// What a trigger says after a firing when its `notify` asks for it: a line on
// the daemon's log and, when a server is configured, an `ai.vigil.notify`
// observation. Never throws.
import type { Publish } from './firing.ts';

export const NOTIFY_TYPE = 'ai.vigil.notify';

/** `actor` is the trigger that fired (`agent:sentinel/<name>@<host>`). */
export function notifyFiring(log: (line: string) => void, publish: Publish | undefined, title: string, body: string, actor?: string): void {
  try {
    log(`notify: ${title}: ${body}`);
    publish?.(NOTIFY_TYPE, title, { title, body }, actor);
  } catch {
    // notifying must never fail a firing
  }
}
