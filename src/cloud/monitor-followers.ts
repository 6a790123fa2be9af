// Webhooks that follow monitors (event `monitor.observation`): each
// observation a followed monitor stores is delivered, signed and retried like
// every other event, to the registrations whose monitor and types match.
// Deliveries are queued as the observation is appended, so their rows commit
// in its batch and the first attempt is made once both are stored.
import type { MonitorService } from '../service/service.ts';
import type { CloudRows } from './cloud-rows.ts';
import type { WebhookTable } from './cloud-store.ts';
import type { DeliveryQueue } from './delivery-queue.ts';
import { monitorObservationEvent } from './wire-types.ts';

export interface FollowFilter {
  monitor: string;
  types?: string[];
}

export function filterOf(row: WebhookTable): FollowFilter | undefined {
  if (row.filter === null) return undefined;
  try {
    return JSON.parse(row.filter) as FollowFilter;
  } catch {
    return undefined;
  }
}

export const typeMatches = (types: readonly string[] | undefined, type: string): boolean =>
  types === undefined || types.some((t) => (t.endsWith('*') ? type.startsWith(t.slice(0, -1)) : type === t));

export class MonitorFollowers {
  /** monitor id → its active registrations, read from the store when one is added or removed. */
  private byMonitor = new Map<string, Array<{ row: WebhookTable; types?: string[] }>>();
  private readonly unsubscribe: () => void;

  constructor(
    service: MonitorService,
    private readonly store: CloudRows,
    private readonly queue: DeliveryQueue,
    private readonly log: (line: string) => void = () => {},
  ) {
    void this.reload();
    this.unsubscribe = service.observations.onAppended((feed, appended, kind) => {
      // Producers' observations only: the server's own bookkeeping and refusals are not what a receiver follows.
      if (kind !== 'producer') return;
      const followers = this.byMonitor.get(feed.id);
      if (!followers) return;
      const { observation } = appended;
      const rows = followers.filter((f) => typeMatches(f.types, observation.type)).map((f) => f.row);
      if (rows.length === 0) return;
      this.queue
        .deliver(rows, { type: monitorObservationEvent, timestamp: observation.time, data: observation as unknown as Record<string, unknown> })
        .catch((error: Error) => this.log(`webhook deliveries of ${feed.id} seq ${appended.seq} not stored: ${error.message}`));
    });
  }

  /** Re-reads the registrations (after one is added or deleted). */
  async reload(): Promise<void> {
    const next = new Map<string, Array<{ row: WebhookTable; types?: string[] }>>();
    for (const row of await this.store.allSubscribers(monitorObservationEvent)) {
      const filter = filterOf(row);
      if (!filter) continue;
      const list = next.get(filter.monitor) ?? [];
      list.push({ row, ...(filter.types ? { types: filter.types } : {}) });
      next.set(filter.monitor, list);
    }
    this.byMonitor = next;
  }

  close(): void {
    this.unsubscribe();
  }
}
