// The managed edge on a cluster (docs/scaling.md, docs/cloud.md): a worker's
// script, secrets and crons live in PostgreSQL, so a worker deployed through
// one node answers on every node's edge, a redeploy or a secret set through
// one node is what every node serves next, a restart loses nothing, a delete
// is a 404 everywhere, and each due time of a cron runs once across the nodes.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { call } from '../support/client.ts';
import { type EdgeAnswer, edgeFetch } from '../support/edge.ts';
import { postgresFor } from '../support/postgres.ts';
import type { ServerProcess } from '../support/server-process.ts';
import { scaled } from '../support/time-scale.ts';
import { nodesOnOneDatabase } from './nodes.ts';

const unavailable = await postgresFor('the shared workers tests');

const admin = 'vga_shared-workers-admin-token-of-the-test';
const flags = ['--allow-admin', admin];

/** Where `name` answers on the node's edge, as the node printed it. */
function edgeUrl(node: ServerProcess, name: string): string {
  const template = /edge workers at (http:\/\/\S+)/.exec(node.output())?.[1];
  if (!template) throw new Error(`no edge URL in the output:\n${node.output()}`);
  return template.replace('<name>', name);
}

const script = (label: string) => `export default { async fetch(request, env) { return new Response('${label} ' + (env.WORD ?? '-')); } };`;

async function makeKey(node: ServerProcess): Promise<string> {
  const made = await call(node.url, 'POST', '/v1/api-keys', { token: admin, body: { name: 'workers', monitors: '*' } });
  expect(made.status).toBe(201);
  return made.body.key as string;
}

const text = (answer: EdgeAnswer) => `${answer.status} ${answer.text}`;

describe.skipIf(unavailable !== undefined)('managed-edge workers on several nodes', { timeout: scaled(240_000) }, () => {
  const cluster = nodesOnOneDatabase();

  it('serves a worker deployed through one node on the other, follows redeploys and secrets, keeps it over a restart, and deletes it everywhere', async () => {
    let [a, b] = await cluster.start(2, flags);
    const key = await makeKey(a!);
    const deployed = await call(a!.url, 'PUT', '/v1/workers/shared', { token: key, body: { script: script('v1') } });
    expect(deployed.status, JSON.stringify(deployed.body)).toBe(200);
    expect(text(await edgeFetch(edgeUrl(b!, 'shared')))).toBe('200 v1 -');
    expect(text(await edgeFetch(edgeUrl(a!, 'shared')))).toBe('200 v1 -');

    // A secret set through A is what B's running worker reads at its next request.
    expect((await call(a!.url, 'PUT', '/v1/workers/shared/secrets/WORD', { token: key, body: { value: 'hello' } })).status).toBe(200);
    expect(text(await edgeFetch(edgeUrl(b!, 'shared')))).toBe('200 v1 hello');
    // A redeploy through B is what A's running worker answers with next.
    expect((await call(b!.url, 'PUT', '/v1/workers/shared', { token: key, body: { script: script('v2') } })).status).toBe(200);
    expect(text(await edgeFetch(edgeUrl(a!, 'shared')))).toBe('200 v2 hello');
    expect((await call(a!.url, 'GET', '/v1/workers/shared/secrets', { token: key })).body).toEqual(['WORD']);

    await a!.stop();
    a = (await cluster.start(1, flags))[0];
    expect(text(await edgeFetch(edgeUrl(a!, 'shared')))).toBe('200 v2 hello');
    expect((await call(a!.url, 'GET', '/v1/workers', { token: key })).body.map((w: { name: string }) => w.name)).toEqual(['shared']);

    // Another key cannot take the name through either node.
    const other = await makeKey(b!);
    expect((await call(a!.url, 'PUT', '/v1/workers/shared', { token: other, body: { script: script('x') } })).body.code).toBe('DUPLICATE');

    // Deleted through B: both edges answer 404, A's running copy included.
    expect((await call(b!.url, 'DELETE', '/v1/workers/shared', { token: key })).body).toEqual({ deleted: true });
    for (const node of [a!, b!]) expect((await edgeFetch(edgeUrl(node, 'shared'))).status).toBe(404);
    expect((await call(a!.url, 'GET', '/v1/workers', { token: key })).body).toEqual([]);
  });

  it('runs each due time of a cron once with two nodes up', async () => {
    // The worker reports each run's scheduledTime (its due time) to the test.
    const runs: number[] = [];
    let reported: () => void = () => {};
    const receiver = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        runs.push(Number(body));
        reported();
        response.end('ok');
      });
    });
    await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
    try {
      const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/run`;
      const [a, b] = await cluster.start(2, [...flags, '--allow-private-workers']);
      const key = await makeKey(a!);
      const ticker = `export default {
        async scheduled(event) { await fetch('${receiverUrl}', { method: 'POST', body: String(event.scheduledTime) }); },
        async fetch() { return new Response('ticker'); },
      };`;
      expect((await call(a!.url, 'PUT', '/v1/workers/ticker', { token: key, body: { script: ticker, crons: ['* * * * * *'] } })).status).toBe(200);
      expect(text(await edgeFetch(edgeUrl(b!, 'ticker')))).toBe('200 ticker');
      // B reads every worker's crons every 2 s: over 8 due times both nodes fire most of them.
      const wanted = 8;
      await new Promise<void>((done, fail) => {
        const limit = setTimeout(() => fail(new Error(`only ${runs.length} cron runs reported: ${runs.join(', ')}`)), scaled(60_000));
        reported = () => {
          if (new Set(runs).size < wanted) return;
          clearTimeout(limit);
          done();
        };
      });
      expect((await call(b!.url, 'DELETE', '/v1/workers/ticker', { token: key })).status).toBe(200);
      const seen = [...runs];
      // Every report names a whole second, and none is reported twice.
      expect(seen.every((time) => time % 1000 === 0)).toBe(true);
      expect(seen.length).toBe(new Set(seen).size);
    } finally {
      await new Promise((done) => receiver.close(done));
    }
  });
});
