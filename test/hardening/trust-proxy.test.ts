// Behind a reverse proxy every client arrives from the proxy's address.
// `--trust-proxy` names the proxies whose X-Forwarded-For is believed, so the
// per-client limits count the real clients; anyone else's X-Forwarded-For is
// ignored, so a client cannot pick the address it is limited as.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/client.ts';
import { type ServerProcess, startServerProcess, transports } from '../support/server-process.ts';
import { spawnChild } from '../support/children.ts';
import { vigilArgs as vigilArgsFor } from '../support/server-process.ts';

const limits = ['--client-limits', 'creates_per_minute=2'];
const create = (base: string, id: string, forwardedFor?: string) =>
  call(base, 'POST', '/monitors', { body: { id }, headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {} });

describe.each(transports)('--trust-proxy over %s', (transport) => {
  let trusting: ServerProcess;
  let plain: ServerProcess;
  beforeAll(async () => {
    [trusting, plain] = await Promise.all([
      startServerProcess({ transport, args: [...limits, '--trust-proxy', '127.0.0.1,::1'] }),
      startServerProcess({ transport, args: [...limits, '--client-limits-loopback'] }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([trusting?.stop(), plain?.stop()]);
  });

  it('limits each forwarded client on its own, by the right-most address the proxy added', async () => {
    // Without --client-limits-loopback the proxy itself (loopback) would not be limited at all.
    // What a client wrote itself (the left entries) is not believed; the proxy's own entry is.
    expect((await create(trusting.base, 'fwd-a1', '198.51.100.7, 203.0.113.5')).status).toBe(201);
    expect((await create(trusting.base, 'fwd-a2', '10.9.9.9, 203.0.113.5')).status).toBe(201);
    const third = await create(trusting.base, 'fwd-a3', '203.0.113.5');
    expect(third.status).toBe(429);
    expect(third.body.error).toMatch(/This client/);
    // Another client behind the same proxy has its own budget.
    expect((await create(trusting.base, 'fwd-b1', '192.0.2.44')).status).toBe(201);
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
    // Without --trust-proxy the loopback peer is the client, whatever it claims to forward.
    // Three different networks: believed, each would have had a budget of its own.
    expect((await create(plain.base, 'own-1', '198.51.100.1')).status).toBe(201);
    expect((await create(plain.base, 'own-2', '203.0.113.2')).status).toBe(201);
    const third = await create(plain.base, 'own-3', '192.0.2.3');
    expect(third.status).toBe(429);
  });
});

describe('--trust-proxy flag', () => {
  it('refuses a value that is not an IP address, naming the flag (exit 2)', async () => {
    const child = spawnChild(process.execPath, vigilArgsFor(['serve', '--port', '0', '--trust-proxy', 'proxy.internal']), { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stderr!.on('data', (d) => (output += d));
    const code = await new Promise<number | null>((done) => child.once('exit', done));
    expect(code).toBe(2);
    expect(output).toContain('--trust-proxy: "proxy.internal" is not an IP address');
  });
});
