// The event forwarder: every product event emitted on the in-process channel
// (here usage.limit_reached, as a budget emits it) is POSTed to the cloud API
// of the project's api_url and reaches the registered receiver; without
// api_url nothing is sent, and a failure is reported, never thrown.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forwardProductEvents } from '../../src/cloud/event-forwarder.ts';
import { emitEvent, settleEvents } from '../../src/events/channel.ts';
import { vaultSet } from '../../src/vault/vault.ts';
import { call } from '../support/client.ts';
import { makeKey, useCloudServer } from './fixtures.ts';
import { type Receiver, startReceiver } from './receiver.ts';

const secret = 'forwarder-secret-0123456789';

describe('event forwarder', () => {
  const server = useCloudServer({ cloud: { allowInsecureWebhooks: true } });
  const root = mkdtempSync(join(tmpdir(), 'vigil-forward-'));
  const env = { ...process.env, VIGIL_HOME: join(root, 'home'), VIGIL_VAULT_BACKEND: 'file', VIGIL_API_URL: '' };
  const warnings: string[] = [];
  let receiver: Receiver;
  let stop: () => void;
  beforeAll(async () => {
    receiver = await startReceiver(secret);
    mkdirSync(join(root, 'project', '.vigil'), { recursive: true });
    stop = forwardProductEvents({ workspace: () => join(root, 'project'), env, warn: (l) => warnings.push(l) });
  });
  afterAll(async () => {
    stop();
    await receiver.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('sends nothing without api_url', async () => {
    emitEvent('usage.limit_reached', { recipe: 'none' });
    await settleEvents();
    expect(warnings).toEqual([]);
    expect(receiver.received).toHaveLength(0);
  });

  it('reports a missing key, then forwards usage.limit_reached to the registered receiver', async () => {
    writeFileSync(join(root, 'project', 'vigil.yml'), `api_url: ${server.url}\n`);
    emitEvent('usage.limit_reached', { recipe: 'early' });
    await settleEvents();
    expect(warnings.at(-1)).toMatch(/usage.limit_reached not sent to .*no API key in the vault/);

    const key = await makeKey(server.url);
    vaultSet('api_key', key, { scope: 'api' }, env);
    await call(server.url, 'POST', '/v1/webhooks', { token: key, body: { event: 'usage.limit_reached', url: receiver.url, secret } });
    emitEvent('usage.limit_reached', { recipe: 'nightly', budget: { usd: 1 }, spent: { usd: 1.02 } });
    await settleEvents();
    const [delivery] = await receiver.waitFor(1);
    expect(delivery!.verified).toBe(true);
    expect(delivery!.body).toMatchObject({ type: 'usage.limit_reached', data: { recipe: 'nightly', spent: { usd: 1.02 } } });
  });

  it('without api_url, forwards to server.base of vigil.yml (docs/cloud.md)', async () => {
    writeFileSync(join(root, 'project', 'vigil.yml'), `server:\n  base: ${server.url}\n`);
    const before = receiver.received.length;
    emitEvent('usage.limit_reached', { recipe: 'by-server-base' });
    await settleEvents();
    const all = await receiver.waitFor(before + 1);
    expect(all.at(-1)!.body).toMatchObject({ type: 'usage.limit_reached', data: { recipe: 'by-server-base' } });
  });

  it('reports an unreachable server without throwing', async () => {
    writeFileSync(join(root, 'project', 'vigil.yml'), 'api_url: http://127.0.0.1:1\n');
    emitEvent('cir.capture', { id: 'x' });
    await settleEvents();
    expect(warnings.at(-1)).toMatch(/cir.capture not sent to http:\/\/127.0.0.1:1: cannot reach/);
  });
});
