// Who held each subject when, for the dashboard's lease timelines: the
// monitor's `lease` observations (claim, renew, complete, release, reject,
// expired; a reject may dead-letter), kept per subject for the last hour.
// Read incrementally: each view reads only the lease observations committed
// since the last one (the first read starts from the monitor's last
// `seedRows` observations).
import { observationTypes } from '../protocol/vocabulary.ts';
import type { Feed } from '../service/feed.ts';
import type { MonitorService } from '../service/service.ts';

export interface LeaseMoment {
  at: string;
  action: string;
  /** The subscription that holds (or held) the lease. */
  holder: string | null;
  /** Who recorded the moment: the subscriber, or the server for an expiry. */
  by: string;
  expires: string | null;
  dead_lettered?: boolean;
  /** The call's note (a concurrency slot's names the run and step), cut to `noteChars`. */
  note?: string;
}

const keptMs = 60 * 60_000;
const seedRows = 2000;
const perSubject = 60;
const subjectsShown = 30;
const readLimit = 5000;
/** A note may be 4,000 characters; the page keeps up to 30 × 60 moments of them. */
const noteChars = 200;

interface Book {
  upTo: number;
  subjects: Map<string, LeaseMoment[]>;
}

export class LeaseHistory {
  private readonly byFeed = new Map<number, Book>();

  constructor(private readonly service: MonitorService) {}

  /** The subjects with lease activity in the last hour, most recent first, each with its moments oldest first. */
  of(feed: Feed): Array<{ subject: string; moments: LeaseMoment[] }> {
    const book = this.read(feed);
    const since = this.service.now() - keptMs;
    const out: Array<{ subject: string; moments: LeaseMoment[]; last: number }> = [];
    for (const [subject, moments] of book.subjects) {
      while (moments.length > 0 && Date.parse(moments[0]?.at ?? '') < since && moments.length > 1) moments.shift();
      const last = Date.parse(moments.at(-1)?.at ?? '');
      if (!(last >= since)) {
        book.subjects.delete(subject);
        continue;
      }
      out.push({ subject, moments, last });
    }
    out.sort((a, b) => b.last - a.last);
    return out.slice(0, subjectsShown).map(({ subject, moments }) => ({ subject, moments }));
  }

  private read(feed: Feed): Book {
    let book = this.byFeed.get(feed.key);
    if (!book) {
      book = { upTo: Math.max(0, feed.committedHead - seedRows), subjects: new Map() };
      this.byFeed.set(feed.key, book);
    }
    if (feed.committedHead <= book.upTo) return book;
    const rows = this.service.store.readFeed(feed.key, book.upTo + 1, readLimit, [{ types: [observationTypes.lease] }], feed.committedHead);
    for (const row of rows) {
      const o = JSON.parse(row.body) as { time: string; subject: string | null; actor: string; data?: { payload?: Record<string, unknown> } };
      const d = o.data?.payload ?? {};
      const subject = typeof d.subject === 'string' ? d.subject : o.subject;
      if (typeof subject !== 'string' || typeof d.action !== 'string') continue;
      const list = book.subjects.get(subject) ?? [];
      list.push({
        at: o.time,
        action: d.action,
        holder: typeof d.holder === 'string' ? d.holder : null,
        by: o.actor,
        expires: typeof d.expires === 'string' ? d.expires : null,
        ...(d.dead_lettered === true ? { dead_lettered: true } : {}),
        ...(typeof d.note === 'string' && d.note !== '' ? { note: d.note.length > noteChars ? `${d.note.slice(0, noteChars - 1)}…` : d.note } : {}),
      });
      if (list.length > perSubject) list.shift();
      book.subjects.set(subject, list);
    }
    book.upTo = rows.length === readLimit ? (rows.at(-1)?.seq ?? feed.committedHead) : feed.committedHead;
    return book;
  }
}
