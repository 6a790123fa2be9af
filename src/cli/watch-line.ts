// The line `vigil watch` prints for one observation (protocol.md §16, with
// the monitor and the time added): the provenance in short (tier, origin,
// actor) and the data as the producer published it, without the provenance
// object the server adds to it. Every field comes from whoever published,
// so each is escaped: a newline or a space in a subject must not forge a
// second line or a field with someone else's provenance.

import { producerData } from '../protocol/observation.ts';
import { serverOnlyTypes } from '../protocol/vocabulary.ts';
import { controlChars, escapeControl } from '../text/terminal.ts';

/** The server's own records (subscriptions, leases, refusals, …): hidden by `vigil watch` unless --all. */
export const isBookkeeping = (o: { type: string }): boolean => serverOnlyTypes.has(o.type);

export interface WatchedObservation {
  id: string;
  type: string;
  subject: string | null;
  time?: string;
  tier: string;
  origin: string;
  actor: string;
  data: unknown;
}

/** A token as is when it is plain; otherwise a JSON string, quoted, with every control character escaped. */
export function field(value: string | null | undefined): string {
  if (value === null || value === undefined || value === '') return '-';
  if (/^[\w.:@/+-]+$/.test(value) && value !== '-') return value;
  return JSON.stringify(value).replace(controlChars, escapeControl);
}

export function watchLine(o: WatchedObservation, monitor: string): string {
  const data = JSON.stringify(producerData(o.data) ?? null).replace(controlChars, escapeControl);
  const cut = data.length > 400 ? `${data.slice(0, 399)}…` : data;
  return `${field(o.id)} ${field(o.type)} ${field(o.subject)} tier=${field(o.tier)} origin=${field(o.origin)} actor=${field(o.actor)} monitor=${field(monitor)} time=${field(o.time)} ${cut}`;
}
