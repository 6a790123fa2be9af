// How many requests the managed edge answers at once for one worker and for
// one client (issue 42): an answer is relayed while the client reads it, so
// each one in progress holds a workerd request, a socket to workerd and a
// connection. A client is its address's network (a /24, a /64), as for the
// monitor API's anonymous limits (service/client-limits.ts), loopback
// included: the edge serves other people's sites. Past either cap the
// request is answered 429 at once, never queued.
import { networkOf } from '../../service/client-limits.ts';

export interface EdgeRequestCaps {
  /** Requests one worker answers at once, every client together. */
  readonly perWorker: number;
  /** Requests one client (its /24 or /64) has in progress at once, every worker together. */
  readonly perClient: number;
}

export const defaultEdgeRequestCaps: EdgeRequestCaps = { perWorker: 64, perClient: 16 };

export class EdgeAdmission {
  private readonly byWorker = new Map<string, number>();
  private readonly byClient = new Map<string, number>();

  constructor(readonly caps: EdgeRequestCaps = defaultEdgeRequestCaps) {}

  /** Counts the request in (the returned function counts it out, once), or says why it is refused. */
  admit(worker: string, address: string): { release: () => void } | { refused: string } {
    const client = networkOf(address);
    const atWorker = this.byWorker.get(worker) ?? 0;
    const atClient = this.byClient.get(client) ?? 0;
    if (atClient >= this.caps.perClient) {
      return { refused: `This client (${client}) already has ${atClient} requests to the edge in progress, the most one client may have; send the next once one finishes.` };
    }
    if (atWorker >= this.caps.perWorker) {
      return { refused: `Worker "${worker}" is already answering ${atWorker} requests, the most it answers at once; try again shortly.` };
    }
    this.byWorker.set(worker, atWorker + 1);
    this.byClient.set(client, atClient + 1);
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        this.down(this.byWorker, worker);
        this.down(this.byClient, client);
      },
    };
  }

  /** Requests in progress now (tests). */
  inProgress(): number {
    let n = 0;
    for (const count of this.byWorker.values()) n += count;
    return n;
  }

  private down(counts: Map<string, number>, key: string): void {
    const left = (counts.get(key) ?? 1) - 1;
    if (left > 0) counts.set(key, left);
    else counts.delete(key);
  }
}
