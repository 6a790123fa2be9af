// A pending delivery survives kill -9 of the server: the receiver is down,
// the first attempt fails, the server is killed, and after a restart the
// retry arrives, signed, with the same webhook-id.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call } from '../support/client.ts';
import { edgeFetch } from '../support/edge.ts';
import { type ServerProcess, stablePort, startServerProcess, tempDir } from '../support/server-process.ts';
import { adminToken, makeKey } from './fixtures.ts';
import { type Receiver, startReceiver } from './receiver.ts';
import { scaled } from '../support/time-scale.ts';
import { until, untilTrue } from '../support/until.ts';

const secret = 'durable-secret-0123456789';
const dir = tempDir('vigil-cloud-');
let server: ServerProcess | undefined;
let receiver: Receiver | undefined;
afterAll(async () => {
  await server?.kill();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Pids of the workerd processes whose parent is `parent` (read from /proc). */
function workerdChildren(parent: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return stat.includes('(workerd)') && ppid === parent;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Where the worker answers on this run's edge port, as `vigil serve` printed it. */
const keeperUrl = (running: ServerProcess): string => {
  const template = /edge workers at (http:\/\/\S+)/.exec(running.output())?.[1];
  if (!template) throw new Error(`no edge URL in the output:\n${running.output()}`);
  return template.replace('<name>', 'keeper');
};

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('delivery durability', () => {
  it('a delivery pending at kill -9 is retried after the restart, and a deployed worker comes back', { timeout: 120_000 }, async () => {
    const state = join(dir, 'state.db');
    const args = [`--allow-admin=${adminToken}`, '--allow-insecure-webhooks'];
    server = await startServerProcess({ state, args, transport: 'node' });
    const key = await makeKey(server.url);
    const receiverPort = await stablePort();
    const hook = (
      await call(server.url, 'POST', '/v1/webhooks', {
        token: key,
        body: { event: 'cir.capture', url: `http://127.0.0.1:${receiverPort}/hook`, secret },
      })
    ).body;
    const script = 'export default { async fetch(request, env) { return new Response(env.WORD); } };';
    expect((await call(server.url, 'PUT', '/v1/workers/keeper', { token: key, body: { script } })).status).toBe(200);
    await call(server.url, 'PUT', '/v1/workers/keeper/secrets/WORD', { token: key, body: { value: 'still here' } });
    expect((await call(server.url, 'POST', '/v1/events', { token: key, body: { type: 'cir.capture', data: { n: 1 } } })).status).toBe(202);
    const log = () => call(server!.url, 'GET', `/v1/webhooks/${hook.id}/deliveries`, { token: key }).then((r) => r.body.deliveries);
    const failed = await until('the first delivery attempt', async () => {
      const d = await log();
      return d[0]?.attempts >= 1 ? d : undefined;
    }, scaled(60_000));
    expect(failed[0]).toMatchObject({ status: 'pending', attempts: 1, error: expect.stringContaining('ECONNREFUSED') });
    expect((await edgeFetch(keeperUrl(server))).status).toBe(200);
    const workerd = workerdChildren(server.child.pid!);
    expect(workerd.length).toBeGreaterThan(0);
    await server.kill();
    // The killed server's workerd processes do not outlive it.
    await untilTrue(() => `the workerd processes ${workerd.filter(alive).join(', ')} to exit`, () => workerd.filter(alive).length === 0, scaled(10_000));

    receiver = await startReceiver(secret, receiverPort);
    server = await startServerProcess({ state, args, transport: 'node' });
    const [arrived] = await receiver.waitFor(1, 60_000);
    expect(arrived!.verified).toBe(true);
    expect(arrived!.headers['webhook-id']).toBe(failed[0].id);
    expect(arrived!.body).toMatchObject({ type: 'cir.capture', data: { n: 1 } });
    const done = await until('the delivery after the restart', async () => {
      const d = await log();
      return d[0]?.status === 'delivered' ? d : undefined;
    }, scaled(60_000));
    expect(done[0]).toMatchObject({ status: 'delivered', response_code: 200 });
    expect((await edgeFetch(keeperUrl(server))).text).toBe('still here');
  });
});
