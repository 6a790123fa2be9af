// The webhook and worker namespaces from a script: the same calls as the CLI,
// synchronous to the script, with the API key read inside the SDK.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastJson, makeSdkProject, type SdkProject, vigil } from '../sdk/helpers.ts';
import { makeKey, useCloudServer } from './fixtures.ts';
import { type Receiver, startReceiver } from './receiver.ts';

const secret = 'script-secret-0123456789';

describe('sdk.webhook and sdk.worker in a script', { timeout: 120_000 }, () => {
  const server = useCloudServer({ cloud: { allowInsecureWebhooks: true } });
  let project: SdkProject;
  let receiver: Receiver;
  beforeAll(async () => {
    project = makeSdkProject();
    receiver = await startReceiver(secret);
    project.file('vigil.yml', `api_url: ${server.url}\n`);
    await vigil(project, ['vault', 'set', 'api_key', '--scope', 'api'], { stdin: await makeKey(server.url) });
  });
  afterAll(async () => {
    await receiver.close();
    project.cleanup();
  });

  it('registers and tests a webhook, deploys a worker, and gets VigilErrors for bad input', async () => {
    project.script(
      'cloud.js',
      `const hook = sdk.webhook.register('cir.capture', sdk.vars.URL, '${secret}');
const list = sdk.webhook.list();
const test = sdk.webhook.test(hook.id);
let bad = null;
try { sdk.webhook.register('cir.nope', sdk.vars.URL, '${secret}'); } catch (e) { bad = { code: e.code, field: e.details.field }; }
sdk.worker.create('fromscript', { template: 'fetch' });
const deployed = sdk.worker.deploy('fromscript', { minify: true });
sdk.worker.secret.set('fromscript', 'K', 'v');
const secrets = sdk.worker.secret.list('fromscript');
const deleted = sdk.worker.delete('fromscript');
return { id: hook.id, listed: list.map((w) => w.id), test, bad, deployed, secrets, deleted, deletedHook: sdk.webhook.delete(hook.id) };`,
    );
    const r = await vigil(project, ['script', 'run', 'cloud', '--var', `URL=${receiver.url}`]);
    expect(r.code, r.stderr).toBe(0);
    const out = lastJson(r) as Record<string, any>;
    expect(out.listed).toEqual([out.id]);
    expect(out.test).toEqual({ delivered: true, response_code: 200 });
    expect(out.bad).toEqual({ code: 'INVALID_ARGUMENT', field: 'event' });
    expect(out.deployed).toEqual({ name: 'fromscript', url: `http://fromscript.localhost:${server.server.edgePort}/`, deployed: true });
    expect(out.secrets).toEqual(['K']);
    expect(out.deleted).toEqual({ deleted: true });
    expect(out.deletedHook).toEqual({ deleted: true });
    expect(receiver.received[0]!.verified).toBe(true);
  });
});
