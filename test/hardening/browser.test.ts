// Browser origins in a real browser (§13): Debian's Chromium, headless,
// driven by playwright-core. A page on the allowed origin calls the API
// (preflighted GET and POST with a bearer) and reads the answers; a page on
// another origin can neither read nor write. scripts/install-chromium.sh
// installs Chromium; where it could not, this file skips and says so.
import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumFor, chromiumPath } from '../support/requirements.ts';
import { call, createMonitor, publish } from '../support/client.ts';
import { type ServerProcess, startServerProcess, tempDir, transports } from '../support/server-process.ts';

const haveChromium = chromiumFor('the --allow-origin browser tests');

/** A tiny page server on its own loopback port: its own web origin. */
async function pageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>page</title><p>page</p>');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

interface FetchResult {
  ok: boolean;
  status?: number;
  body?: any;
  error?: string;
  type?: string;
}

/** Runs fetch inside the page and reports what the page could see. */
function fetchIn(page: Page, url: string, init: { method?: string; headers?: Record<string, string>; body?: string; mode?: RequestMode }) {
  return page.evaluate(
    async ({ url, init }): Promise<FetchResult> => {
      try {
        const response = await fetch(url, init);
        const text = await response.text();
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          // Not JSON (an opaque reply is empty).
        }
        return { ok: true, status: response.status, type: response.type, body };
      } catch (error) {
        return { ok: false, error: String(error) };
      }
    },
    { url, init },
  );
}

describe.skipIf(!haveChromium)('a real browser against --allow-origin', () => {
  let context: BrowserContext;
  let profile: string;
  let allowed: { server: Server; origin: string };
  let other: { server: Server; origin: string };
  beforeAll(async () => {
    [allowed, other] = await Promise.all([pageServer(), pageServer()]);
    profile = tempDir('vigil-chromium-');
    context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  afterAll(async () => {
    await context?.close();
    await Promise.all([allowed, other].map((p) => p && new Promise((done) => p.server.close(done))));
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  describe.each(transports)('over %s', (transport) => {
    let vigil: ServerProcess;
    beforeAll(async () => {
      vigil = await startServerProcess({ transport, args: ['--allow-origin', allowed.origin, '--allow-admin=adm-browser'] });
    });
    afterAll(() => vigil?.stop());

    const headOf = async (id: string, token: string) => (await call(vigil.base, 'GET', `/monitors/${id}`, { token })).body.head as number;
    const monitorCount = async () => (await call(vigil.base, 'GET', '/admin/snapshot', { token: 'adm-browser' })).body.monitors as number;

    it('the page on the allowed origin reads with GET and writes with POST (both preflighted by the bearer)', async () => {
      const m = await createMonitor(vigil.base, { capabilities: ['observe'] });
      await publish(vigil.base, m.id, m.ownerToken, { type: 'app.seen', subject: 'a' });
      const page = await context.newPage();
      try {
        await page.goto(`${allowed.origin}/`);
        const auth = { authorization: `Bearer ${m.ownerToken}` };
        const read = await fetchIn(page, `${vigil.base}/monitors/${m.id}`, { headers: auth });
        expect(read).toMatchObject({ ok: true, status: 200, type: 'cors' });
        expect(read.body.id).toBe(m.id);

        const before = await headOf(m.id, m.ownerToken);
        const write = await fetchIn(page, `${vigil.base}/monitors/${m.id}/observations`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ type: 'app.from_browser', subject: 'b', data: { hello: 'world' } }),
        });
        expect(write).toMatchObject({ ok: true, status: 201, type: 'cors' });
        expect(write.body.seq).toBe(before + 1);
        expect(await headOf(m.id, m.ownerToken)).toBe(before + 1);
      } finally {
        await page.close();
      }
    });

    it('the page on another origin can neither read nor write', async () => {
      const m = await createMonitor(vigil.base, { visibility: 'public' });
      await publish(vigil.base, m.id, m.ownerToken, { type: 'app.seen', subject: 'a' });
      const head = await headOf(m.id, m.ownerToken);
      const monitors = await monitorCount();
      const page = await context.newPage();
      try {
        await page.goto(`${other.origin}/`);
        const auth = { authorization: `Bearer ${m.ownerToken}` };
        // Reads: a simple GET (no preflight) of a public monitor, and a preflighted one with the bearer.
        const simpleRead = await fetchIn(page, `${vigil.base}/monitors/${m.id}`, {});
        expect(simpleRead.ok, JSON.stringify(simpleRead)).toBe(false);
        const bearerRead = await fetchIn(page, `${vigil.base}/monitors/${m.id}`, { headers: auth });
        expect(bearerRead.ok).toBe(false);
        const opaque = await fetchIn(page, `${vigil.base}/monitors/${m.id}`, { mode: 'no-cors' });
        expect(opaque).toMatchObject({ ok: true, status: 0, type: 'opaque' });
        expect(opaque.body).toBeUndefined();

        // Writes: preflighted (refused before it is sent) and "simple" ones that a browser sends without asking.
        const preflighted = await fetchIn(page, `${vigil.base}/monitors/${m.id}/observations`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ type: 'app.from_evil' }),
        });
        expect(preflighted.ok).toBe(false);
        for (const path of ['/monitors', `/monitors/${m.id}/observations`, '/subscriptions']) {
          const simple = await fetchIn(page, `${vigil.base}${path}`, {
            method: 'POST',
            mode: 'no-cors',
            headers: { 'content-type': 'text/plain' },
            body: JSON.stringify({ id: 'from-evil', type: 'app.from_evil', monitor: m.id, subscriber: 'agent:evil' }),
          });
          expect(simple).toMatchObject({ ok: true, status: 0, type: 'opaque' });
        }
      } finally {
        await page.close();
      }
      // Nothing was stored: not even a refusal record (the origin is refused before any operation runs).
      expect(await headOf(m.id, m.ownerToken)).toBe(head);
      expect(await monitorCount()).toBe(monitors);
      expect((await call(vigil.base, 'GET', '/monitors/from-evil')).status).toBe(404);
    });
  });
});
