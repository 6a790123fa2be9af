// An observation's `body` as the observations table stores it. The served
// JSON's envelope (specversion, id, source, type, subject, time,
// datacontenttype, sequence, tier, origin, verified, horizon, actor) is about
// 300 of a `lease` observation's 700 bytes, and all but `source` and
// `verified` are the row's own columns: the table keeps `{"data":…}` with
// those two, and a read puts the envelope back (bench/README.md, issue 46).
// `data` stays whole and first, so the filters that look into it
// (json_extract(body, '$.data…'), filter-sql.ts) read the same. The short form
// is stored only when rebuilding it gives the served text back byte for byte;
// any other body, and every row written before, is stored and read whole.
import type { ObservationRow } from './records.ts';

const shortStart = '{"data":';
const tailStart = ',"~":[';
const envelopeStart = '{"specversion":"1.0",';
const dataKey = ',"data":';

/** The columns a read puts the envelope back from. */
export type EnvelopeColumns = Pick<ObservationRow, 'seq' | 'type' | 'subject' | 'actor' | 'tier' | 'origin' | 'horizon' | 'time'>;

const text = (value: string) => JSON.stringify(value);

function envelope(c: EnvelopeColumns, source: string, verified: string, data: string): string {
  const seq = String(c.seq);
  return (
    `{"specversion":"1.0","id":"${seq}","source":${text(source)},"type":${text(c.type)},` +
    `"subject":${c.subject === null ? 'null' : text(c.subject)},"time":${text(c.time)},"datacontenttype":"application/json",` +
    `"sequence":"${seq.padStart(20, '0')}","tier":${text(c.tier)},"origin":${text(c.origin)},"verified":${text(verified)},` +
    `"horizon":${text(c.horizon)},"actor":${text(c.actor)},"data":${data}}`
  );
}

/**
 * What to store for the served text `body` of an observation whose envelope says `source` and
 * `verified`: the short form when it rebuilds to exactly `body`, else `body` itself.
 */
export function storedBody(columns: EnvelopeColumns, body: string, source: string, verified: string): string {
  if (!body.startsWith(envelopeStart)) return body;
  // Every envelope value before `data` is a string or null, in which `,"data":` cannot occur unescaped.
  const at = body.indexOf(dataKey);
  if (at < 0) return body;
  const data = body.slice(at + dataKey.length, -1);
  const short = `${shortStart}${data}${tailStart}${text(source)},${text(verified)}]}`;
  return servedBody(columns, short) === body ? short : body;
}

/** The served text of a stored row. */
export function servedBody(columns: EnvelopeColumns, stored: string): string {
  if (!stored.startsWith(shortStart)) return stored;
  // The tail follows `data` whole, so its last occurrence is the tail.
  const tail = stored.lastIndexOf(tailStart);
  const [source, verified] = JSON.parse(stored.slice(tail + tailStart.length - 1, -1)) as [string, string];
  return envelope(columns, source, verified, stored.slice(shortStart.length, tail));
}
