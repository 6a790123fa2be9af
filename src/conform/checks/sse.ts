// §11 the server-sent event stream: frames, start position, Last-Event-ID.
import { type CheckContext, CheckSkipped, check } from '../check.ts';
import { accepted, ensure, equal, excerpt, fail, refused } from '../expect.ts';
import { createMonitor, publish, pull, subscribe } from '../fixtures.ts';
import type { Wire } from '../wire-client.ts';

interface Frame {
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
}

/** Opens the stream, reads frames until `enough` holds or `ms` pass, then closes it. */
async function readStream(ctx: CheckContext, sub: { id: string; token: string }, headers: Record<string, string>, query: string, enough: (frames: Frame[]) => boolean, ms = 4000) {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), ms);
  const frames: Frame[] = [];
  let contentType = '';
  let status = 0;
  try {
    const response = await fetch(`${ctx.base}/subscriptions/${sub.id}/stream${query}`, { headers: { authorization: `Bearer ${sub.token}`, accept: 'text/event-stream', ...headers }, signal: abort.signal });
    status = response.status;
    contentType = response.headers.get('content-type') ?? '';
    if (status !== 200) return { status, contentType, frames, text: await response.text() };
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body as Wire) {
      buffer += decoder.decode(chunk, { stream: true });
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const frame: Frame = {};
        for (const line of block.split('\n')) {
          const colon = line.indexOf(':');
          if (colon <= 0) continue;
          const key = line.slice(0, colon) as keyof Frame;
          const value = line.slice(colon + 1).replace(/^ /, '');
          frame[key] = key === 'data' && frame.data !== undefined ? `${frame.data}\n${value}` : value;
        }
        frames.push(frame);
      }
      if (enough(frames)) break;
    }
  } catch (error) {
    if ((error as Error).name !== 'AbortError') throw error;
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
  return { status, contentType, frames, text: '' };
}

const observationFrames = (frames: Frame[]) => frames.filter((f) => f.event === 'observation');

export const sseChecks = [
  check('§11', 'MP-11-frames', 'the stream is text/event-stream: retry 3000 once, then id/event/data per observation', async (ctx) => {
    const m = await createMonitor(ctx);
    for (const subject of ['a', 'b']) await publish(ctx, m, { type: 'conform.event', subject });
    const s = await subscribe(ctx, m, { filter: { types: 'conform.event' } });
    const read = await readStream(ctx, s, {}, '', (f) => observationFrames(f).length >= 2);
    if (read.status === 404) fail(`GET /subscriptions/<id>/stream is not served: 404 ${excerpt(read.text)}`);
    equal(read.status, 200, 'status');
    ensure(read.contentType.startsWith('text/event-stream'), `content-type is ${read.contentType}`);
    equal(read.frames[0]?.retry, '3000', 'the first frame is retry: 3000');
    ensure(read.frames.filter((f) => f.retry !== undefined).length === 1, 'retry sent more than once');
    const obs = observationFrames(read.frames);
    equal(obs.map((f) => JSON.parse(f.data ?? 'null')?.subject), ['a', 'b'], 'subjects of the observation frames');
    equal(obs.map((f) => f.id), obs.map((f) => JSON.parse(f.data!).id), 'frame ids are the observation seqs');
  }),

  check('§11', 'MP-11-token', 'the stream needs the subscription token (401 UNAUTHORIZED)', async (ctx) => {
    const m = await createMonitor(ctx);
    const s = await subscribe(ctx, m);
    refused(await ctx.http.get(`/subscriptions/${s.id}/stream`), 401, 'UNAUTHORIZED', 'stream without a token');
    refused(await ctx.http.get(`/subscriptions/${s.id}/stream`, { token: `${s.token}x` }), 401, 'UNAUTHORIZED', 'stream with a wrong token');
    const read = await readStream(ctx, s, {}, '', (f) => f.length >= 1, 2000);
    equal(read.status, 200, 'stream with the subscription token');
  }),

  check('§11', 'MP-11-last-event-id', 'Last-Event-ID resumes at the next seq, before ?cursor=, and streaming never commits', async (ctx) => {
    const m = await createMonitor(ctx);
    const seqs = [];
    for (const subject of ['a', 'b', 'c']) seqs.push(await publish(ctx, m, { type: 'conform.event', subject }));
    const s = await subscribe(ctx, m, { filter: { types: 'conform.event' } });
    const resumed = await readStream(ctx, s, { 'last-event-id': String(seqs[0]) }, `?cursor=${seqs[2]}`, (f) => observationFrames(f).length >= 2);
    equal(observationFrames(resumed.frames).map((f) => JSON.parse(f.data!).subject), ['b', 'c'], `subjects after Last-Event-ID ${seqs[0]} (with ?cursor=${seqs[2]})`);
    const byCursor = await readStream(ctx, s, {}, `?cursor=${seqs[2]}`, (f) => observationFrames(f).length >= 1);
    equal(observationFrames(byCursor.frames).map((f) => JSON.parse(f.data!).subject), ['c'], `subjects from ?cursor=${seqs[2]}`);
    const page = await pull(ctx, s);
    equal(page.cursor, s.subscription.cursor, 'the committed cursor after streaming');
    accepted(await ctx.http.post(`/subscriptions/${s.id}/ack`, { cursor: page.next }, s.token), 200, 'ack after streaming');
  }),

  check('§11', 'MP-11-start-committed', 'without Last-Event-ID or ?cursor= the stream starts at the committed cursor', async (ctx) => {
    const m = await createMonitor(ctx);
    for (const subject of ['a', 'b']) await publish(ctx, m, { type: 'conform.event', subject });
    const s = await subscribe(ctx, m, { filter: { types: 'conform.event' } });
    const page = await pull(ctx, s, { limit: 1 });
    accepted(await ctx.http.post(`/subscriptions/${s.id}/ack`, { cursor: page.next }, s.token), 200, 'ack after a');
    const read = await readStream(ctx, s, {}, '', (f) => observationFrames(f).length >= 1);
    equal(observationFrames(read.frames).map((f) => JSON.parse(f.data!).subject), ['b'], 'subjects streamed after acknowledging a');
  }),

  check('§11', 'MP-11-error', 'an error ends the stream with event: error and the error body', async (ctx) => {
    if (!ctx.adminToken) throw new CheckSkipped('no admin token to compact with (use --self or --admin-token)');
    const m = await createMonitor(ctx);
    const s = await subscribe(ctx, m, { reset_policy: 'none' });
    const seq = await publish(ctx, m, { type: 'conform.event' });
    accepted(await ctx.http.post('/admin/compact', { monitor: m.id, upto_seq: seq }, ctx.adminToken), 200, 'compact');
    const read = await readStream(ctx, s, {}, '', (f) => f.some((x) => x.event === 'error'));
    // Either reading is accepted: the error before the stream opens (410), or as an error frame.
    if (read.status === 410) {
      ensure(read.text.includes('CURSOR_EXPIRED'), `410 without CURSOR_EXPIRED: ${excerpt(read.text)}`);
      return 'refused with 410 CURSOR_EXPIRED before streaming (accepted reading)';
    }
    const frame = read.frames.find((f) => f.event === 'error');
    ensure(frame, `no event: error on a stream below the retention floor: ${excerpt(read.frames)}`);
    equal(JSON.parse(frame.data ?? 'null')?.code, 'CURSOR_EXPIRED', 'code in the error frame');
  }),

  check('§11', 'MP-11-live', 'an observation published while streaming arrives on the open stream', async (ctx) => {
    const m = await createMonitor(ctx);
    const s = await subscribe(ctx, m, { from: 'head', filter: { types: 'conform.event' } });
    const reading = readStream(ctx, s, {}, '', (f) => observationFrames(f).length >= 1, 5000);
    await new Promise((done) => setTimeout(done, 300));
    await publish(ctx, m, { type: 'conform.event', subject: 'live' });
    const read = await reading;
    equal(observationFrames(read.frames).map((f) => JSON.parse(f.data!).subject), ['live'], 'subjects received live');
  }),
];
