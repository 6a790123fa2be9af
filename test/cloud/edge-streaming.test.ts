// Issue 42 point 4: a worker's answer is relayed to its client as it comes,
// under back-pressure, never held whole in the server's memory; and requests
// in progress are capped per worker and per client. 40 clients of a worker
// answering 31 MB each took the server from about 200 MB to 2.4 GB (and it
// stayed there); relayed, the server stays within a few tens of MB of where
// it started.
import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { call } from '../support/client.ts';
import { transports } from '../support/server-process.ts';
import { untilTrue } from '../support/until.ts';
import { useServer } from '../http/fixtures.ts';
import { adminToken, makeKey, useCloudServer } from './fixtures.ts';

// 16 MB, not the 31: held whole, 40 answers are still 640 MB (three times the 200 MB
// allowed, twice that in RSS as measured), and relaying half the bytes halves the file's CPU.
const answerMb = 16;
const bigScript = `export default { async fetch() {
  const chunk = new Uint8Array(1 << 20).fill(97);
  let sent = 0;
  return new Response(new ReadableStream({ pull(c) { if (sent++ < ${answerMb}) c.enqueue(chunk); else c.close(); } }));
} };`;

const rssMb = (pid: number, field: 'VmRSS' | 'VmHWM') => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** GET on the edge by Host, from `localAddress`; resolves with the head, the body read in full (or cut). */
function edgeGet(port: number, host: string, path = '/', localAddress?: string): Promise<{ status: number; bytes: number; complete: boolean; body: string }> {
  return new Promise((done, fail) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { host }, localAddress }, (res) => {
      let bytes = 0;
      let body = '';
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (body.length < 1000) body += chunk.toString('utf8', 0, Math.min(chunk.length, 1000));
      });
      res.on('error', () => {});
      res.on('close', () => done({ status: res.statusCode ?? 0, bytes, complete: res.complete, body }));
    });
    req.on('error', (error) => ((req as { res?: unknown }).res ? undefined : fail(error)));
    req.end();
  });
}

describe.each(transports)('edge answers relayed over %s', { timeout: 300_000 }, (transport) => {
  // Room for 40 requests from this one client (the default is 16), and time for all of them on a busy machine.
  const server = useServer({ transport, args: ['--allow-admin', adminToken, '--worker-timeout', '300', '--edge-limits', 'requests_per_client=64'] });

  it(`40 concurrent ${answerMb} MB answers each arrive whole while the server grows by less than 200 MB`, async () => {
    const key = await makeKey(server.url);
    const deployed = await call(server.url, 'PUT', '/v1/workers/firehose', { token: key, body: { script: bigScript } });
    expect(deployed.status, JSON.stringify(deployed.body)).toBe(200);
    const port = Number(new URL(deployed.body.url).port);
    const host = `firehose.localhost:${port}`;
    // Warm: the worker's runtime is up and one answer went through.
    expect((await edgeGet(port, host)).bytes).toBe(answerMb << 20);
    const pid = server.server.child.pid!;
    const before = rssMb(pid, 'VmRSS');
    const answers = await Promise.all(Array.from({ length: 40 }, () => edgeGet(port, host)));
    expect(answers.map((a) => a.status)).toEqual(Array(40).fill(200));
    expect(answers.every((a) => a.complete && a.bytes === answerMb << 20)).toBe(true);
    // VmHWM: the most the server ever held. Held whole, 40 answers of 31 MB were over 1.2 GB (2.4 GB measured).
    const peak = rssMb(pid, 'VmHWM');
    expect(peak - before, `server RSS ${Math.round(before)} MB before, ${Math.round(peak)} MB at its peak`).toBeLessThan(200);
  });
});

describe('edge requests in progress are capped per worker and per client', { timeout: 120_000 }, () => {
  const server = useCloudServer({ cloud: { workerTimeoutMs: 120_000, edgeLimits: { requests_per_worker: 4, requests_per_client: 3 } } });
  // Sends its first line at once, then holds the answer open: a request stays in progress until its client leaves.
  const holdScript = `export default { async fetch(request) {
    if (new URL(request.url).pathname === '/quick') return new Response('quick');
    return new Response(new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode('held\\n')); }, pull() { return new Promise((r) => setTimeout(r, 600000)); } }));
  } };`;

  /** A request whose answer began: its head and first line arrived; the caller closes it. */
  function hold(port: number, from: string): Promise<{ status: number; first: string; close: () => void; body: () => string }> {
    return new Promise((done, fail) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/', headers: { host: `holder.localhost:${port}` }, localAddress: from }, (res: IncomingMessage) => {
        let text = '';
        res.on('error', () => {});
        res.on('data', (chunk: Buffer) => {
          const first = text === '';
          text += chunk.toString();
          if (first) done({ status: res.statusCode ?? 0, first: text, close: () => req.destroy(), body: () => text });
        });
        res.on('end', () => done({ status: res.statusCode ?? 0, first: text, close: () => req.destroy(), body: () => text }));
      });
      req.on('error', (error) => ((req as { res?: unknown }).res ? undefined : fail(error)));
      req.end();
    });
  }

  it('answers 429 past 3 requests from one client and past 4 to one worker, and takes more once they finish', async () => {
    const key = await makeKey(server.url);
    const deployed = await call(server.url, 'PUT', '/v1/workers/holder', { token: key, body: { script: holdScript } });
    expect(deployed.status, JSON.stringify(deployed.body)).toBe(200);
    const port = server.server.edgePort!;
    const mine = await Promise.all([hold(port, '127.0.0.1'), hold(port, '127.0.0.1'), hold(port, '127.0.0.1')]);
    expect(mine.map((h) => [h.status, h.first])).toEqual(Array(3).fill([200, 'held\n']));
    const fourth = await hold(port, '127.0.0.1');
    expect(fourth.status).toBe(429);
    expect(JSON.parse(fourth.body())).toEqual({
      code: 'OVER_BUDGET',
      error: 'This client (127.0.0.0/24) already has 3 requests to the edge in progress, the most one client may have; send the next once one finishes.',
    });
    // Another client (another /24) still gets the worker's fourth place, and no fifth.
    const other = await hold(port, '127.0.1.1');
    expect([other.status, other.first]).toEqual([200, 'held\n']);
    const fifth = await hold(port, '127.0.2.1');
    expect(fifth.status).toBe(429);
    expect(JSON.parse(fifth.body()).error).toBe('Worker "holder" is already answering 4 requests, the most it answers at once; try again shortly.');

    // Clients that leave free their places.
    for (const h of [...mine, other]) h.close();
    await untilTrue('the held requests to end', () => server.server.cloud!.edge.admission.inProgress() === 0);
    const again = await edgeGet(port, `holder.localhost:${port}`, '/quick');
    expect([again.status, again.body]).toEqual([200, 'quick']);
    await call(server.url, 'DELETE', '/v1/workers/holder', { token: key });
  });
});
