// After a run, which of its servers still answer. A server killed or stopped
// during the run leaves figures that read like a slow server's (its requests
// counted refused or unanswered, its rates divided by the whole run), so the
// command asks each one again and says so; with none left it exits 3.
import { Wire } from './wire.ts';

export interface Silent {
  readonly root: string;
  /** What asking it gave: `gave no answer (ECONNREFUSED)`, `answered HTTP 503`. */
  readonly why: string;
}

/** Longest wait for each server's answer: the run's clients have stopped, so a live server answers at once. */
const probeMs = 5000;

/** The servers of `roots` that do not answer `GET /discover` with 200 within min(timeoutMs, 5 s). */
export async function silentServers(roots: readonly string[], timeoutMs: number): Promise<Silent[]> {
  const waitMs = Math.min(timeoutMs, probeMs);
  const wire = new Wire(1, waitMs);
  try {
    const replies = await Promise.all(roots.map(async (root) => ({ root, reply: await wire.request(root, 'GET', '/discover') })));
    return replies
      .filter(({ reply }) => reply.status !== 200)
      .map(({ root, reply }) => ({
        root,
        why: reply.status !== 0 ? `answered HTTP ${reply.status}` : reply.code === 'timeout' ? `gave no answer within ${waitMs / 1000} s` : `gave no answer (${reply.code})`,
      }));
  } finally {
    await wire.close();
  }
}

/** The lines that say which servers went silent: a warning while some still answer, the run's failure when none does. */
export function silenceText(kind: string, silent: readonly Silent[], servers: number): string {
  const list = silent.map((s) => `${s.root} ${s.why}`).join(', ');
  if (silent.length < servers) {
    return `warning: ${silent.length} of ${servers} servers did not answer GET /discover after the run: ${list}; their clients' requests after they stopped are counted above as refused or unanswered\n`;
  }
  const which = servers === 1 ? 'the server' : `all ${servers} servers`;
  return `vigil bench ${kind}: ${which} stopped answering during the run (asked GET /discover after it, ${list}): the figures above are of a run that lost its server, and its rates are divided by the whole run\n`;
}
