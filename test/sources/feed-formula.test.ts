// feed sources against RSS, Atom and JSON Feed documents served over HTTP
// here; formula sources over other monitors' states; and the checks of a
// monitor's source (unknown fields, bad URLs and expressions, opt-in kinds).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, publish } from '../support/client.ts';
import { eventually, type SourceServer, sourceServer, watchedMonitor, writtenAtLeast } from './helpers.ts';

let vigil: SourceServer;
let feeds: Server;
let feedBase: string;
const documents: Record<string, { type: string; body: () => string }> = {};
let rssItems = [{ id: 'r1', title: 'first' }];
/** Requests the feed server answered, by URL. */
const polls = new Map<string, number>();
const pollsOf = (url: string) => polls.get(url) ?? 0;
/** Waits for `count` more polls of `url` (path and query) than now. */
async function morePolls(url: string, count: number): Promise<void> {
  const from = pollsOf(url);
  await eventually(async () => (pollsOf(url) >= from + count ? true : undefined), `${count} more polls of ${url}`);
}

beforeAll(async () => {
  vigil = await sourceServer({ kinds: ['feed', 'formula', 'http'] });
  documents['/rss.xml'] = {
    type: 'application/rss+xml',
    body: () =>
      `<?xml version="1.0"?><rss version="2.0"><channel><title>news</title><link>http://example.test/</link><description>d</description>${[...rssItems]
        .reverse()
        .map((i) => `<item><title>${i.title}</title><guid>${i.id}</guid><link>http://example.test/${i.id}</link></item>`)
        .join('')}</channel></rss>`,
  };
  documents['/atom.xml'] = {
    type: 'application/atom+xml',
    body: () =>
      '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>a</title><id>urn:feed</id><updated>2026-01-01T00:00:00Z</updated><entry><title>entry one</title><id>urn:e1</id><updated>2026-01-01T00:00:00Z</updated><link href="http://example.test/e1"/></entry></feed>',
  };
  documents['/feed.json'] = {
    type: 'application/feed+json',
    body: () => JSON.stringify({ version: 'https://jsonfeed.org/version/1.1', title: 'j', items: [{ id: 'j1', title: 'json item', url: 'http://example.test/j1' }] }),
  };
  feeds = createServer((req, res) => {
    polls.set(req.url ?? '', (polls.get(req.url ?? '') ?? 0) + 1);
    // A query string (?m=…) tells the monitors polling one document apart.
    const doc = documents[(req.url ?? '').split('?')[0]!];
    if (!doc) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': doc.type });
    res.end(doc.body());
  });
  await new Promise<void>((d) => feeds.listen(0, '127.0.0.1', d));
  feedBase = `http://127.0.0.1:${(feeds.address() as AddressInfo).port}`;
});
afterAll(async () => {
  feeds.closeAllConnections();
  await new Promise((d) => feeds.close(d));
  await vigil.close();
});

describe('feed source', () => {
  it('writes each new RSS item once, oldest first', async () => {
    rssItems = [{ id: 'r1', title: 'first' }];
    const watched = await watchedMonitor(vigil.base, { kind: 'feed', url: `${feedBase}/rss.xml?m=new-items`, interval_s: 1 });
    const [first] = await writtenAtLeast(watched, 1);
    expect(first).toMatchObject({ actor: 'source:feed', type: 'ai.vigil.source.feed', subject: 'r1' });
    expect(first.data).toMatchObject({ title: 'first', link: 'http://example.test/r1' });
    rssItems = [...rssItems, { id: 'r2', title: 'second' }, { id: 'r3', title: 'third' }];
    const written = await writtenAtLeast(watched, 3);
    expect(written.map((o) => o.subject)).toEqual(['r1', 'r2', 'r3']);
    // Several more polls of the same document write nothing new.
    await morePolls('/rss.xml?m=new-items', 2);
    expect((await watched.written()).map((o) => o.subject)).toEqual(['r1', 'r2', 'r3']);
  });

  it('reads Atom and JSON Feed documents', async () => {
    const atom = await watchedMonitor(vigil.base, { kind: 'feed', url: `${feedBase}/atom.xml`, interval_s: 1 });
    const json = await watchedMonitor(vigil.base, { kind: 'feed', url: `${feedBase}/feed.json`, interval_s: 1 });
    expect((await writtenAtLeast(atom, 1))[0]).toMatchObject({ subject: 'urn:e1', data: { title: 'entry one', link: 'http://example.test/e1' } });
    expect((await writtenAtLeast(json, 1))[0]).toMatchObject({ subject: 'j1', data: { title: 'json item', link: 'http://example.test/j1' } });
  });

  it('backs off on a document that is not a feed', async () => {
    const watched = await watchedMonitor(vigil.base, { kind: 'feed', url: `${feedBase}/missing`, interval_s: 1 });
    const actor = await eventually(async () => {
      const snapshot = vigil.server.service.system.sources.get(watched.id)?.getSnapshot();
      return snapshot?.value === 'backing_off' ? snapshot : undefined;
    }, 'backing off');
    expect(actor.context.lastError).toMatch(/answered 404/);
    expect(await watched.written()).toEqual([]);
  });
});

describe('formula source', () => {
  it('writes when the value computed from its inputs changes', async () => {
    // Inputs must be visible to the token that creates the formula: one is its own, the other public.
    const a = await watchedMonitor(vigil.base, { kind: 'log' });
    const b = await watchedMonitor(vigil.base, { kind: 'log' }, undefined, { visibility: 'public' });
    const expression = `${a.id.replace(/-/g, '_')}.value + ${b.id.replace(/-/g, '_')}.observations`;
    const reply = await call(vigil.base, 'POST', '/monitors', {
      body: { source: { kind: 'formula', expression, inputs: [a.id, b.id], interval_s: 1 } },
      token: a.ownerToken,
    });
    expect(reply.status).toBe(201);
    expect((await publish(vigil.base, a.id, a.ownerToken, { type: 'test.reading', data: { value: 40 } })).status).toBe(201);
    await publish(vigil.base, b.id, b.ownerToken, { type: 'test.reading', data: { value: 1 } });
    await publish(vigil.base, b.id, b.ownerToken, { type: 'test.reading', data: { value: 1 } });
    const formula = { ...a, id: reply.body.monitor.id, ownerToken: reply.body.owner_token };
    const sub = await call(vigil.base, 'POST', '/subscriptions', {
      body: { monitor: formula.id, subscriber: 'agent:t', from: 'earliest' },
      token: formula.ownerToken,
    });
    const values = await eventually(async () => {
      const page = await call(vigil.base, 'GET', `/subscriptions/${sub.body.subscription.id}/pull?cursor=1&limit=100`, { token: sub.body.token });
      const vs = page.body.observations.filter((o: any) => o.actor === 'source:formula').map((o: any) => o.data.value);
      return vs.at(-1) === 42 ? vs : undefined;
    }, 'the value 42');
    expect(new Set(values).size).toBe(values.length); // written on change only
  });
});

describe('checking a source', () => {
  const refused = async (source: Record<string, unknown>) => {
    const reply = await call(vigil.base, 'POST', '/monitors', { body: { source } });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('INVALID');
    return reply.body;
  };

  it('names the field for unknown fields, bad URLs and bad expressions', async () => {
    expect((await refused({ kind: 'http', url: 'http://127.0.0.1:1/', colour: 'red' })).field).toBe('source.colour');
    expect((await refused({ kind: 'http', url: 'not a url' })).field).toBe('source.url');
    expect((await refused({ kind: 'http', url: 'ftp://example.test/' })).field).toBe('source.url');
    expect((await refused({ kind: 'feed', url: `${feedBase}/rss.xml`, interval_s: 0 })).field).toBe('source.interval_s');
    expect((await refused({ kind: 'formula', expression: '1 +* 2', inputs: ['x'] })).field).toBe('source.expression');
    expect((await refused({ kind: 'formula', expression: '1', inputs: ['no-such-monitor'] })).field).toBe('source.inputs.0');
  });

  it('refuses kinds the server does not run, naming the flag', async () => {
    const body = await refused({ kind: 'file', path: '.' });
    expect(body).toMatchObject({ field: 'source.kind' });
    expect(body.error).toContain('--sources');
    const shell = await refused({ kind: 'shell', command: 'true' });
    expect(shell.error).toContain('--allow-shell-sources');
  });

  it('stops the source on pause and starts it again on resume', async () => {
    rssItems = [{ id: 'p1', title: 'one' }];
    const watched = await watchedMonitor(vigil.base, { kind: 'feed', url: `${feedBase}/rss.xml?m=paused`, interval_s: 1 });
    // Polls the same document on the same schedule, unpaused: the seconds a paused source lets pass.
    const witness = await watchedMonitor(vigil.base, { kind: 'feed', url: `${feedBase}/rss.xml?m=witness`, interval_s: 1 });
    await writtenAtLeast(watched, 1);
    await writtenAtLeast(witness, 1);
    const sources = vigil.server.service.system.sources;
    expect(sources.isResident(watched.id)).toBe(true);
    const pause = await call(vigil.base, 'POST', `/monitors/${watched.id}/pause`, { body: { reason: 'test' }, token: watched.ownerToken });
    expect(pause.status).toBe(200);
    expect(sources.isResident(watched.id)).toBe(false);
    rssItems = [...rssItems, { id: 'p2', title: 'two' }];
    // A poll already on its way when the pause came has arrived by the witness's next one.
    await morePolls('/rss.xml?m=witness', 1);
    const pausedPolls = pollsOf('/rss.xml?m=paused');
    await morePolls('/rss.xml?m=witness', 2);
    expect(pollsOf('/rss.xml?m=paused')).toBe(pausedPolls);
    expect((await watched.written()).length).toBe(1);
    await call(vigil.base, 'POST', `/monitors/${watched.id}/resume`, { body: { reason: 'test' }, token: watched.ownerToken });
    expect(sources.isResident(watched.id)).toBe(true);
    expect((await writtenAtLeast(watched, 2)).map((o) => o.subject)).toEqual(['p1', 'p2']);
    await call(vigil.base, 'POST', `/monitors/${watched.id}/retire`, { body: { reason: 'test' }, token: watched.ownerToken });
    expect(sources.isResident(watched.id)).toBe(false);
    await call(vigil.base, 'POST', `/monitors/${witness.id}/retire`, { body: { reason: 'test' }, token: witness.ownerToken });
  });
});
