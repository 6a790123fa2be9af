// Workers as a user runs them: `vigil worker create|deploy|…` against the
// managed edge of a real server (a real worker answers over HTTP, reads a
// secret and verifies a signed webhook delivery), and against the user's own
// account up to the wrangler invocation, with a fake `wrangler` on PATH that
// records its arguments.
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/client.ts';
import { edgeFetch } from '../support/edge.ts';
import { signedHeaders } from '../../src/cloud/signed-delivery.ts';
import { makeSdkProject, type SdkProject, vigil } from '../sdk/helpers.ts';
import { makeKey, useCloudServer } from './fixtures.ts';

describe('vigil worker on the managed edge', { timeout: 180_000 }, () => {
  const server = useCloudServer({ cloud: { allowInsecureWebhooks: true } });
  let project: SdkProject;
  let key: string;
  beforeAll(async () => {
    project = makeSdkProject();
    project.file('vigil.yml', `api_url: ${server.url}\n`);
    key = await makeKey(server.url);
    await vigil(project, ['vault', 'set', 'api_key', '--scope', 'api'], { stdin: key });
  });
  afterAll(() => project.cleanup());

  it('creates, deploys (minified), calls, sets a secret it reads, lists and deletes', async () => {
    const made = await vigil(project, ['worker', 'create', 'hello', '--json']);
    expect(made.code, made.stderr).toBe(0);
    expect(JSON.parse(made.stdout)).toEqual({ name: 'hello', path: join(project.root, '.vigil', 'workers', 'hello') });
    expect(existsSync(join(project.root, '.vigil/workers/hello/src/index.ts'))).toBe(true);
    expect((await vigil(project, ['worker', 'create', 'hello'])).stderr).toMatch(/already exists/);
    expect((await vigil(project, ['worker', 'create', 'x', '--template', 'cron'])).code).toBe(2);

    const deployed = await vigil(project, ['worker', 'deploy', 'hello', '--minify', '--json']);
    expect(deployed.code, deployed.stderr).toBe(0);
    const result = JSON.parse(deployed.stdout);
    expect(result).toEqual({ name: 'hello', url: `http://hello.localhost:${server.server.edgePort}/`, deployed: true });
    const answer = await edgeFetch(`${result.url}some/path`);
    expect(answer.json()).toEqual({ worker: 'hello', path: '/some/path', method: 'GET', secrets: 0 });

    expect((await vigil(project, ['worker', 'secret', 'set', 'hello', 'TOKEN'], { stdin: 'abc' })).code).toBe(0);
    expect((await edgeFetch(result.url)).json()).toMatchObject({ secrets: 1 });
    expect(JSON.parse((await vigil(project, ['worker', 'secret', 'list', 'hello', '--json'])).stdout)).toEqual(['TOKEN']);
    expect((await vigil(project, ['worker', 'secret', 'delete', 'hello', 'TOKEN'])).code).toBe(0);
    expect((await edgeFetch(result.url)).json()).toMatchObject({ secrets: 0 });

    const list = JSON.parse((await vigil(project, ['worker', 'list', '--json'])).stdout);
    expect(list.map((w: { name: string }) => w.name)).toEqual(['hello']);
    const status = JSON.parse((await vigil(project, ['worker', 'status', 'hello', '--json'])).stdout);
    expect(status).toEqual(list[0]);
    expect(JSON.parse((await vigil(project, ['worker', 'delete', 'hello', '--json'])).stdout)).toEqual({ deleted: true });
    expect((await edgeFetch(result.url)).status).toBe(404);
    expect((await vigil(project, ['worker', 'status', 'hello'])).stderr).toMatch(/No worker "hello"/);
  });

  it('the webhook template verifies a signed delivery from the server and handles a replay once', async () => {
    expect((await vigil(project, ['worker', 'create', 'hook', '--template', 'webhook'])).code).toBe(0);
    const deployed = JSON.parse((await vigil(project, ['worker', 'deploy', 'hook', '--json'])).stdout);
    const secret = 'worker-webhook-secret-123';
    await vigil(project, ['worker', 'secret', 'set', 'hook', 'WEBHOOK_SECRET'], { stdin: secret });
    const reg = await call(server.url, 'POST', '/v1/webhooks', { token: key, body: { event: 'cir.capture', url: deployed.url, secret } });
    expect(reg.status).toBe(201);
    expect((await call(server.url, 'POST', `/v1/webhooks/${reg.body.id}/test`, { token: key })).body).toEqual({ delivered: true, response_code: 200 });
    // A captured delivery sent again (same webhook-id, signature and body) is not handled twice.
    const body = JSON.stringify({ type: 'cir.capture', data: { n: 1 } });
    const delivery = { method: 'POST', body, headers: { ...signedHeaders(secret, 'msg_replayed_0001', body), 'content-type': 'application/json' } };
    expect((await edgeFetch(deployed.url, delivery)).json()).toEqual({ received: 'cir.capture' });
    const replayed = await edgeFetch(deployed.url, delivery);
    expect(replayed.status).toBe(200);
    expect(replayed.json()).toEqual({ received: 'cir.capture', duplicate: true });
    const next = JSON.stringify({ type: 'cir.capture', data: { n: 2 } });
    expect((await edgeFetch(deployed.url, { method: 'POST', body: next, headers: signedHeaders(secret, 'msg_replayed_0002', next) })).json()).toEqual({ received: 'cir.capture' });
    await vigil(project, ['worker', 'secret', 'set', 'hook', 'WEBHOOK_SECRET'], { stdin: 'a-different-secret-value' });
    expect((await call(server.url, 'POST', `/v1/webhooks/${reg.body.id}/test`, { token: key })).body).toMatchObject({ delivered: false, response_code: 401 });
    await vigil(project, ['worker', 'delete', 'hook']);
  });
});

describe('vigil worker on the own account (wrangler)', { timeout: 120_000 }, () => {
  let project: SdkProject;
  let log: string;
  let env: Record<string, string>;
  beforeAll(() => {
    project = makeSdkProject();
    log = join(project.root, 'wrangler-calls.jsonl');
    const bin = join(project.root, 'bin');
    const fake = project.file(
      'bin/wrangler',
      `#!/usr/bin/env node
const fs = require('node:fs');
let stdin = '';
try { stdin = fs.readFileSync(0, 'utf8'); } catch {}
const args = process.argv.slice(2);
fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ args, cwd: process.cwd(), account: process.env.CLOUDFLARE_ACCOUNT_ID, token: process.env.CLOUDFLARE_API_TOKEN, stdin }) + '\\n');
if (args[0] === 'deploy') console.log('Uploaded ' + args[3] + '\\nDeployed ' + args[3] + ' triggers\\n  https://' + args[3] + '.acct.workers.dev');
if (args[0] === 'secret' && args[1] === 'list') console.log(JSON.stringify([{ name: 'TOKEN', type: 'secret_text' }]));
`,
    );
    chmodSync(fake, 0o755);
    env = { PATH: `${bin}:${process.env.PATH}` };
  });
  afterAll(() => project.cleanup());
  const calls = () => readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l));

  it('setup stores the credentials; deploy, secrets, list, status and delete go through wrangler', async () => {
    const setup = await vigil(project, ['worker', 'setup', '--account-id', 'acct0123456789'], { stdin: 'cf-token-value', env });
    expect(setup.code, setup.stderr).toBe(0);
    await vigil(project, ['worker', 'create', 'own', '--template', 'scheduled'], { env });
    const deployed = await vigil(project, ['worker', 'deploy', 'own', '--minify', '--json'], { env });
    expect(deployed.code, deployed.stderr).toBe(0);
    expect(JSON.parse(deployed.stdout)).toEqual({ name: 'own', url: 'https://own.acct.workers.dev', deployed: true });
    const dir = join(project.root, '.vigil', 'workers', 'own');
    expect(calls()[0]).toEqual({
      args: ['deploy', 'dist/index.js', '--name', 'own', '--compatibility-date', '2024-09-23', '--minify'],
      cwd: dir,
      account: 'acct0123456789',
      token: 'cf-token-value',
      stdin: '',
    });
    expect(readFileSync(join(dir, 'dist/index.js'), 'utf8')).toContain('scheduled');
    writeFileSync(log, '');
    await vigil(project, ['worker', 'secret', 'set', 'own', 'TOKEN'], { stdin: 's3cret', env });
    expect(JSON.parse((await vigil(project, ['worker', 'secret', 'list', 'own', '--json'], { env })).stdout)).toEqual(['TOKEN']);
    await vigil(project, ['worker', 'secret', 'delete', 'own', 'TOKEN'], { env });
    expect(JSON.parse((await vigil(project, ['worker', 'list', '--json'], { env })).stdout).map((w: { name: string }) => w.name)).toEqual(['own']);
    expect(JSON.parse((await vigil(project, ['worker', 'status', 'own', '--json'], { env })).stdout).name).toBe('own');
    await vigil(project, ['worker', 'delete', 'own'], { env });
    expect(calls().map((c) => [c.args, c.stdin])).toEqual([
      [['secret', 'put', 'TOKEN', '--name', 'own'], 's3cret'],
      [['secret', 'list', '--name', 'own', '--format', 'json'], ''],
      [['secret', 'delete', 'TOKEN', '--name', 'own'], 'y\n'],
      [['delete', '--name', 'own', '--force'], ''],
    ]);
    expect(JSON.parse((await vigil(project, ['worker', 'list', '--json'], { env })).stdout)).toEqual([]);
  });

  it('says so when wrangler is not on PATH', async () => {
    await vigil(project, ['worker', 'create', 'lonely'], { env });
    const r = await vigil(project, ['worker', 'deploy', 'lonely'], { env: { PATH: '/nonexistent' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/wrangler is not on PATH/);
  });
});
