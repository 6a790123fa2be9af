// The observation promise checked from the publishers' own records and the
// feed as each node serves it: no acknowledged write lost, each write stored
// at most once, seqs without gaps, the same feed on every node.
import type { PublishRecord } from './publishers.ts';

export function checkFeeds(published: readonly PublishRecord[], feeds: ReadonlyArray<readonly any[]>): string[] {
  const problems: string[] = [];
  const [first, ...others] = feeds;
  if (!first) return ['no feed read'];
  first.forEach((o, i) => {
    if (Number(o.id) !== i + 1) problems.push(`seq ${i + 1} is missing or out of place (found ${o.id})`);
  });
  const shape = (o: any) => JSON.stringify([o.id, o.type, o.subject, o.data]);
  others.forEach((feed, n) => {
    if (feed.length !== first.length) problems.push(`node ${n + 1} serves ${feed.length} observations, node 0 serves ${first.length}`);
    feed.forEach((o, i) => {
      if (first[i] && shape(o) !== shape(first[i])) problems.push(`node ${n + 1} differs at seq ${o.id}`);
    });
  });
  const stored = new Map<string, number[]>();
  for (const o of first) {
    if (o.type !== 'test.load') continue;
    const key = `${o.data.publisher}:${o.data.n}`;
    stored.set(key, [...(stored.get(key) ?? []), Number(o.id)]);
  }
  for (const [key, seqs] of stored) if (seqs.length > 1) problems.push(`write ${key} stored ${seqs.length} times (seqs ${seqs.join(', ')})`);
  for (const p of published) {
    if (p.status !== 201) continue;
    const seqs = stored.get(`${p.publisher}:${p.n}`);
    if (!seqs) problems.push(`acknowledged write ${p.publisher}:${p.n} (seq ${p.seq}) is lost`);
    else if (seqs[0] !== p.seq) problems.push(`acknowledged write ${p.publisher}:${p.n} was answered seq ${p.seq} but stored at ${seqs[0]}`);
  }
  return problems;
}
