// Observations per minute over the last hour, per monitor, for the dashboard's
// sparklines. Counted from the commits (every commit that stores observations
// moves a monitor's head; the difference lands in the current minute), and
// seeded once per monitor from its last stored observations, so a restarted
// server still shows the hour before it.
import type { Feed } from '../service/feed.ts';
import type { MonitorService } from '../service/service.ts';

const minuteMs = 60_000;
export const minutesShown = 60;
/** Observations read back to seed a monitor's hour; beyond them the hour is counted from the commits. */
const seedRows = 1000;

interface Count {
  head: number;
  byMinute: Map<number, number>;
}

export class ObservationRates {
  private readonly byFeed = new Map<number, Count>();
  private readonly stop: () => void;

  constructor(private readonly service: MonitorService) {
    this.stop = service.on('recorded', (feed) => this.counted(feed));
  }

  close(): void {
    this.stop();
  }

  /** Counts per minute, oldest first, the last entry the current minute. */
  perMinute(feed: Feed): number[] {
    const count = this.counted(feed);
    const now = Math.floor(this.service.now() / minuteMs);
    const out: number[] = [];
    for (let m = now - minutesShown + 1; m <= now; m++) out.push(count.byMinute.get(m) ?? 0);
    for (const m of count.byMinute.keys()) if (m <= now - minutesShown) count.byMinute.delete(m);
    return out;
  }

  private counted(feed: Feed): Count {
    let count = this.byFeed.get(feed.key);
    if (!count) {
      count = this.seeded(feed);
      this.byFeed.set(feed.key, count);
    }
    const added = feed.committedHead - count.head;
    if (added > 0) {
      const minute = Math.floor(this.service.now() / minuteMs);
      count.byMinute.set(minute, (count.byMinute.get(minute) ?? 0) + added);
    }
    count.head = Math.max(count.head, feed.committedHead);
    return count;
  }

  private seeded(feed: Feed): Count {
    const head = feed.committedHead;
    const byMinute = new Map<number, number>();
    const since = this.service.now() - minutesShown * minuteMs;
    if (head > 0) {
      for (const row of this.service.store.readFeed(feed.key, Math.max(1, head - seedRows + 1), seedRows, [], head)) {
        const time = Date.parse((JSON.parse(row.body) as { time: string }).time);
        if (!(time >= since)) continue;
        const minute = Math.floor(time / minuteMs);
        byMinute.set(minute, (byMinute.get(minute) ?? 0) + 1);
      }
    }
    return { head, byMinute };
  }
}
