// The client side as a user meets it: `vigil api-key`, `vigil webhook` with
// api_url from vigil.yml and the key from the vault, and product events
// (`vigil cir capture`, `vigil cir ingest`) reaching a registered receiver.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSdkProject, type SdkProject, vigil } from '../sdk/helpers.ts';
import { adminToken, useCloudServer } from './fixtures.ts';
import { type Receiver, startReceiver } from './receiver.ts';

const secret = 'cli-secret-0123456789abcdef';

describe('vigil api-key and vigil webhook', { timeout: 120_000 }, () => {
  const server = useCloudServer({ cloud: { allowInsecureWebhooks: true } });
  let project: SdkProject;
  let receiver: Receiver;
  beforeAll(async () => {
    project = makeSdkProject();
    receiver = await startReceiver(secret);
  });
  afterAll(async () => {
    await receiver.close();
    project.cleanup();
  });

  it('refuses without api_url, naming what to set', async () => {
    const r = await vigil(project, ['webhook', 'list']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no cloud API configured: set "api_url"/);
  });

  it('registers, tests, lists and deletes; captures and ingests arrive signed', async () => {
    project.file('vigil.yml', `api_url: ${server.url}\n`);
    const made = await vigil(project, ['api-key', 'create', '--name', 'cli', '--base', server.url, '--admin-token', adminToken]);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stderr).toMatch(/only time it is shown/);
    const key = made.stdout.trim();
    expect(key).toMatch(/^vk_/);
    expect((await vigil(project, ['webhook', 'list'])).stderr).toMatch(/no API key in the vault/);
    expect((await vigil(project, ['vault', 'set', 'api_key', '--scope', 'api'], { stdin: key })).code).toBe(0);

    const short = await vigil(project, ['webhook', 'register', 'cir.capture', receiver.url], { stdin: 'short' });
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/secret: must be text of at least 16 characters/);
    const reg = await vigil(project, ['webhook', 'register', 'cir.capture', receiver.url, '--json'], { stdin: secret });
    expect(reg.code, reg.stderr).toBe(0);
    const { id } = JSON.parse(reg.stdout);
    expect(id).toMatch(/^wh_/);
    await vigil(project, ['webhook', 'register', 'training.ingested', receiver.url], { stdin: secret });
    const list = JSON.parse((await vigil(project, ['webhook', 'list', '--json'])).stdout);
    expect(list.map((w: { event: string; active: string }) => [w.event, w.active])).toEqual([
      ['cir.capture', 'true'],
      ['training.ingested', 'true'],
    ]);

    const tested = await vigil(project, ['webhook', 'test', id, '--json']);
    expect(JSON.parse(tested.stdout)).toEqual({ delivered: true, response_code: 200 });

    const captured = await vigil(project, ['cir', 'capture', 'tests pass on main', '--type', 'test.result']);
    expect(captured.code, captured.stderr).toBe(0);
    project.file('signals.jsonl', `${JSON.stringify({ body: 'build is green', type: 'ci' })}\n`);
    const ingested = await vigil(project, ['cir', 'ingest', 'signals.jsonl']);
    expect(ingested.code, ingested.stderr).toBe(0);
    await receiver.waitFor(3);
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    const byType = Object.fromEntries(receiver.received.map((r) => [r.body.type, r.body.data]));
    expect(byType['cir.capture']).toMatchObject({ body: 'tests pass on main', type: 'test.result' });
    expect(byType['training.ingested']).toMatchObject({ count: 1, types: ['ci'] });

    const deliveries = JSON.parse((await vigil(project, ['webhook', 'deliveries', id, '--json'])).stdout);
    expect(deliveries[0]).toMatchObject({ event: 'cir.capture', status: 'delivered' });
    // Without --json, one tab-separated line per delivery, as `webhook list` prints registrations.
    const table = (await vigil(project, ['webhook', 'deliveries', id])).stdout.trim().split('\n');
    expect(table.map((line) => line.split('\t').slice(0, 5))).toEqual([[deliveries[0].id, 'cir.capture', 'delivered', 'attempts=1', '200']]);
    expect((await vigil(project, ['webhook', 'delete', id])).stdout).toBe(`deleted ${id}\n`);
    expect((await vigil(project, ['webhook', 'delete', id])).stderr).toMatch(/No webhook registration/);
  });

  it('lists and revokes keys; a revoked key is refused', async () => {
    const admin = ['--base', server.url, '--admin-token', adminToken];
    const listed = await vigil(project, ['api-key', 'list', '--json', ...admin]);
    const keys = JSON.parse(listed.stdout) as Array<{ id: string; name: string; revoked: boolean }>;
    const cli = keys.find((k) => k.name === 'cli')!;
    expect(cli.revoked).toBe(false);
    expect(listed.stdout).not.toMatch(/vk_/);
    expect((await vigil(project, ['api-key', 'revoke', cli.id, ...admin])).stdout).toBe(`revoked ${cli.id} (no worker; webhook registrations disabled: 1)\n`); // the registration the test before made
    const refused = await vigil(project, ['webhook', 'list']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/UNAUTHORIZED: This API key is not valid/);
    const wrongAdmin = await vigil(project, ['api-key', 'list', '--base', server.url, '--admin-token', 'nope']);
    expect(wrongAdmin.code).toBe(1);
    expect(wrongAdmin.stderr).toMatch(/UNAUTHORIZED/);
    expect((await vigil(project, ['api-key', 'list', '--base', server.url])).code).toBe(2);
  });

  it('api-key create --monitors scopes the key; "*" only when asked for, and alone', async () => {
    const admin = ['--base', server.url, '--admin-token', adminToken];
    const scoped = await vigil(project, ['api-key', 'create', '--name', 'ci', '--monitors', 'deploys,builds', '--json', ...admin]);
    expect(scoped.code, scoped.stderr).toBe(0);
    expect(JSON.parse(scoped.stdout)).toMatchObject({ name: 'ci', monitors: ['deploys', 'builds'] });
    const plain = await vigil(project, ['api-key', 'create', '--name', 'plain', ...admin]);
    expect(plain.stderr).toMatch(/may trigger no monitor/);
    const all = await vigil(project, ['api-key', 'create', '--name', 'all', '--monitors', '*', ...admin]);
    expect(all.stderr).toMatch(/may trigger every monitor/);
    const mixed = await vigil(project, ['api-key', 'create', '--monitors', 'a,*', ...admin]);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toMatch(/"\*" \(every monitor\) stands alone/);
    const listed = (await vigil(project, ['api-key', 'list', ...admin])).stdout;
    expect(listed).toMatch(/\tci\t.*\tmonitors deploys, builds\n/);
  });
});
