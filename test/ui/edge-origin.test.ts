// A managed-edge worker against the dashboard in a real browser (Debian's
// Chromium, playwright-core). The dashboard is used with the admin token;
// then, in the same tab, a hostile worker's page runs: it must find no token
// (the dashboard keeps it in memory only, and the worker is an origin of its
// own on the edge port), must not read the dashboard's stream, and cannot
// register a service worker over any scope but its own. The old path
// /edge/<name>/ on the dashboard's origin runs none of its code.
// scripts/install-chromium.sh installs Chromium; without it this file skips.
import { rmSync } from 'node:fs';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server.ts';
import { call } from '../support/client.ts';
import { chromiumFor, chromiumPath } from '../support/requirements.ts';
import { tempDir } from '../support/server-process.ts';

const haveChromium = chromiumFor('the edge origin browser test');
const admin = 'vga_edge_origin_test_token_0123456789';

// The page reads everything it could reach, and tries to put a service worker over "/".
const hostile = `const page = \`<!doctype html><title>worker</title><script>
window.result = (async () => {
  const dashboard = decodeURIComponent(location.hash.slice(1));
  const out = { session: JSON.stringify({ ...sessionStorage }), local: JSON.stringify({ ...localStorage }), cookie: document.cookie };
  try { const r = await fetch(dashboard + '/ui/events'); out.events = 'read ' + r.status + ' ' + (await r.text()).slice(0, 200); } catch (e) { out.events = 'refused'; }
  try { await navigator.serviceWorker.register('/js/sw.js', { scope: '/' }); out.serviceWorker = 'registered over /'; } catch (e) { out.serviceWorker = 'refused: ' + e.message; }
  return out;
})();
</script>\`;
export default {
  async fetch(request) {
    if (new URL(request.url).pathname === '/js/sw.js') {
      return new Response('self.addEventListener("fetch", () => {});', { headers: { 'content-type': 'text/javascript', 'service-worker-allowed': '/' } });
    }
    return new Response(page, { headers: { 'content-type': 'text/html; charset=utf-8' } });
  },
};`;

describe.skipIf(!haveChromium)('a managed-edge worker beside the dashboard, in Chromium', { timeout: 120_000 }, () => {
  let server: RunningServer;
  let context: BrowserContext;
  let profile: string;

  beforeAll(async () => {
    server = await startServer({ port: 0, allowAdmin: admin, log: () => undefined });
    profile = tempDir('vigil-chromium-');
    context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  afterAll(async () => {
    await context?.close();
    await server?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it('gives the worker no way to the dashboard token, its stream or its scope', async () => {
    const key = (await call(server.url, 'POST', '/v1/api-keys', { token: admin, body: { name: 'hostile' } })).body.key;
    const deployed = await call(server.url, 'PUT', '/v1/workers/evil', { token: key, body: { script: hostile } });
    expect(deployed.status, JSON.stringify(deployed.body)).toBe(200);
    const workerUrl = `http://evil.localhost:${server.edgePort}/`;
    expect(deployed.body.url).toBe(workerUrl);
    await call(`${server.url}/mp/v0`, 'POST', '/monitors', { body: { id: 'private-ops' } });

    const page = await context.newPage();
    await page.goto(`${server.url}/ui#token=${admin}`);
    await page.waitForSelector('td[data-monitor="private-ops"]');
    // The token is in the page's memory only: nothing of this origin's storage, its cookies or the address holds it.
    expect(page.url()).toBe(`${server.url}/ui`);
    expect(await page.evaluate(() => JSON.stringify({ ...sessionStorage }) + JSON.stringify({ ...localStorage }) + document.cookie)).not.toContain(admin);
    expect(await page.evaluate(() => sessionStorage.length + localStorage.length)).toBe(0);

    // The old address on the dashboard's origin runs none of the worker's code.
    const old = await page.goto(`${server.url}/edge/evil/`);
    expect(old?.status()).toBe(404);
    expect(await old?.json()).toMatchObject({ error: `Workers do not answer on the API's origin; worker "evil" is at ${workerUrl}.` });

    // The same tab moves on to the worker's page.
    await page.goto(`${workerUrl}#${encodeURIComponent(server.url)}`);
    const seen = await page.evaluate(() => (window as unknown as { result: Promise<Record<string, string>> }).result);
    expect(JSON.stringify(seen)).not.toContain(admin);
    expect(seen).toMatchObject({ session: '{}', local: '{}', cookie: '', events: 'refused' });
    expect(seen.serviceWorker).toMatch(/^refused: .*scope/);

    // A later visit to the dashboard runs no code of the worker's.
    const later = await context.newPage();
    await later.goto(`${server.url}/ui`);
    await later.waitForSelector('#live.on');
    expect(await later.evaluate(async () => ({ controlled: navigator.serviceWorker.controller !== null, registrations: (await navigator.serviceWorker.getRegistrations()).length }))).toEqual({
      controlled: false,
      registrations: 0,
    });
    // And without the token it shows no private monitor.
    expect(await later.$('td[data-monitor="private-ops"]')).toBeNull();
    await later.close();
    await page.close();
  });
});
