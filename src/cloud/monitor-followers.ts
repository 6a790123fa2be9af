// Webhooks that follow monitors (event `monitor.observation`): each
// observation a followed monitor stores is delivered, signed and retried like
// every other event, to the registrations whose monitor and types match.
// Deliveries are queued as the observation is appended, so their rows commit
// in its batch and the first attempt is made once both are stored. Access is
// checked at every delivery, not only at registration: a monitor made
// private, or whose token changed, is no longer delivered to a registration
// that saw it only as public or through the old token (issue 42).
import type { Feed } from '../service/feed.ts';
import type { MonitorService } from '../service/service.ts';
import type { CloudRows } from './cloud-rows.ts';
import type { WebhookTable } from './cloud-store.ts';
import type { DeliveryQueue } from './delivery-queue.ts';
import { monitorObservationEvent } from './wire-types.ts';

export interface FollowFilter {
  monitor: string;
  types?: string[];
  /** SHA-256 of the owner or subscribe token given at registration: kept to check access at each delivery, never served. */
  token_hash?: string;
}

export function filterOf(row: WebhookTable): FollowFilter | undefined {
  if (row.filter === null) return undefined;
  try {
    return JSON.parse(row.filter) as FollowFilter;
  } catch {
    return undefined;
  }
}

/** The filter as a registration shows it (without the token's hash). */
export function servedFilterOf(row: WebhookTable): Omit<FollowFilter, 'token_hash'> | undefined {
  const filter = filterOf(row);
  if (!filter) return undefined;
  const { token_hash: _hash, ...shown } = filter;
  return shown;
}

/** Whether the follower may see the monitor now: it is public, or the token given at registration still opens it. */
export function followerMaySee(feed: Feed, filter: FollowFilter): boolean {
  switch (feed.definition.visibility) {
    case 'public':
      return true;
    case 'shared':
      return filter.token_hash !== undefined && (filter.token_hash === feed.ownerTokenHash || filter.token_hash === feed.subscribeTokenHash);
    default:
      return filter.token_hash !== undefined && filter.token_hash === feed.ownerTokenHash;
  }
}

export const typeMatches = (types: readonly string[] | undefined, type: string): boolean =>
  types === undefined || types.some((t) => (t.endsWith('*') ? type.startsWith(t.slice(0, -1)) : type === t));

export class MonitorFollowers {
  /** monitor id → its active registrations, read from the store when one is added or removed. */
  private byMonitor = new Map<string, Array<{ row: WebhookTable; filter: FollowFilter }>>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly service: MonitorService,
    private readonly store: CloudRows,
    private readonly queue: DeliveryQueue,
    private readonly log: (line: string) => void = () => {},
  ) {
    void this.reload();
    this.unsubscribe = service.on('appended', (feed, appended, kind) => {
      // Producers' observations only: the server's own bookkeeping and refusals are not what a receiver follows.
      if (kind !== 'producer') return;
      const followers = this.byMonitor.get(feed.id);
      if (!followers) return;
      const { observation } = appended;
      const rows = followers.filter((f) => typeMatches(f.filter.types, observation.type) && followerMaySee(feed, f.filter)).map((f) => f.row);
      if (rows.length === 0) return;
      this.queue
        .deliver(rows, { type: monitorObservationEvent, timestamp: observation.time, data: observation as unknown as Record<string, unknown> })
        .catch((error: Error) => this.log(`webhook deliveries of ${feed.id} seq ${appended.seq} not stored: ${error.message}`));
    });
  }

  /** Re-reads the registrations (after one is added or deleted). */
  async reload(): Promise<void> {
    const next = new Map<string, Array<{ row: WebhookTable; filter: FollowFilter }>>();
    for (const row of await this.store.allSubscribers(monitorObservationEvent)) {
      const filter = filterOf(row);
      if (!filter) continue;
      const list = next.get(filter.monitor) ?? [];
      list.push({ row, filter });
      next.set(filter.monitor, list);
    }
    this.byMonitor = next;
  }

  /**
   * Why a delivery to `row` may not be attempted now, or undefined when it may: a follower's monitor must
   * still be visible to it (checked again at each attempt, retries included).
   */
  refusal(row: WebhookTable): string | undefined {
    if (row.event !== monitorObservationEvent) return undefined;
    const filter = filterOf(row);
    const feed = filter && this.service.feed(filter.monitor);
    if (!filter || !feed || !followerMaySee(feed, filter)) return `monitor "${filter?.monitor ?? '?'}" is no longer visible to this registration (made private, or its token changed)`;
    return undefined;
  }

  close(): void {
    this.unsubscribe();
  }
}
