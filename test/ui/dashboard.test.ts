// GET /ui (§19) in a real browser: Debian's Chromium driven by
// playwright-core. The page shows a monitor created through the API and its
// new observations without reloading, and each view is photographed (to
// VIGIL_UI_SCREENSHOTS when set — docs/ui/ holds the committed ones —
// otherwise to a temporary folder). scripts/install-chromium.sh installs
// Chromium; where it cannot exist this file skips and says why.
import { mkdirSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server.ts';
import { chromiumFor, chromiumPath } from '../support/requirements.ts';
import { call, publish } from '../support/client.ts';
import { tempDir } from '../support/server-process.ts';

const haveChromium = chromiumFor('the dashboard browser tests');
const admin = 'vga_dashboard_test_token_0123456789';

describe.skipIf(!haveChromium)('the dashboard in Chromium', () => {
  let server: RunningServer;
  let base: string;
  let target: Server;
  let context: BrowserContext;
  let profile: string;
  let page: Page;
  const shots = resolve(process.env.VIGIL_UI_SCREENSHOTS ?? tempDir('vigil-ui-shots-'));

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    server = await startServer({ port: 0, cloud: false, allowAdmin: admin, sources: { kinds: ['http'], minBackoffMs: 200 }, log: () => undefined });
    base = `${server.url}/mp/v0`;
    target = createServer((_req, res) => res.end('healthy'));
    await new Promise<void>((d) => target.listen(0, '127.0.0.1', d));
    profile = tempDir('vigil-chromium-');
    context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath,
      headless: true,
      viewport: { width: 1280, height: 720 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    page = await context.newPage();
  });
  afterAll(async () => {
    await context?.close();
    target?.closeAllConnections();
    await new Promise((d) => target?.close(d));
    await server?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  const view = async (name: string) => {
    await page.click(`nav button[data-view="${name}"]`);
    await page.waitForSelector(`section#${name}:not([hidden])`);
  };

  it('shows a monitor created through the API and its new observations without reloading', async () => {
    // The token travels in the fragment (never sent to the server) and is kept in the page's memory.
    await page.goto(`${server.url}/ui#token=${admin}`);
    await page.waitForSelector('#live.on');
    expect(page.url()).toBe(`${server.url}/ui`);
    await page.evaluate(() => {
      (window as unknown as { loadedOnce: number }).loadedOnce = 1;
    });

    const created = await call(base, 'POST', '/monitors', {
      body: {
        id: 'checkout-health',
        name: 'checkout health',
        capabilities: ['observe', 'act'],
        source: { kind: 'http', url: `http://127.0.0.1:${(target.address() as AddressInfo).port}/health`, interval_s: 1 },
      },
    });
    expect(created.status).toBe(201);
    const owner = created.body.owner_token;
    await page.waitForSelector('td[data-monitor="checkout-health"]');
    await page.waitForFunction(() => document.querySelector('#monitors')?.textContent?.includes('watching'));
    // Its source carries a url: live, and marked so.
    expect(await page.textContent('#monitors [data-source="live"]')).toContain('live');

    // A worker subscribes and holds a lease; a recipe run is published to a recipes monitor.
    await publish(base, 'checkout-health', owner, { type: 'work.incident', subject: 'incident-7', data: { severity: 'high' } });
    const sub = await call(base, 'POST', '/subscriptions', { token: owner, body: { monitor: 'checkout-health', subscriber: 'agent:oncall', capabilities: ['act'] } });
    await call(base, 'POST', `/subscriptions/${sub.body.subscription.id}/leases/claim`, { token: sub.body.token, body: { subject: 'incident-7', lease_duration_seconds: 300 } });
    const recipes = await call(base, 'POST', '/monitors', { body: { id: 'recipes', types: ['ai.vigil.recipe.run', 'ai.vigil.recipe.step'] } });
    await publish(base, 'recipes', recipes.body.owner_token, {
      type: 'ai.vigil.recipe.run',
      subject: 'run-20261124-01',
      data: { recipe: 'triage', status: 'succeeded', steps: 3 },
    });

    await view('observations');
    await page.waitForFunction(() => document.querySelector('#observations')?.textContent?.includes('incident-7'));
    await page.waitForFunction(() => document.querySelector('#observations')?.textContent?.includes('source:http'));
    await view('subscriptions');
    await page.waitForFunction(() => document.querySelector('#subscriptions')?.textContent?.includes('agent:oncall'));
    await view('leases');
    await page.waitForFunction(() => document.querySelector('#leases')?.textContent?.includes('held'));
    await view('runs');
    await page.waitForFunction(() => document.querySelector('#runs')?.textContent?.includes('run-20261124-01'));
    await view('actors');
    await page.waitForFunction(() => {
      const text = document.querySelector('#actors')?.textContent ?? '';
      return ['monitor', 'subscription', 'lease', 'source'].every((kind) => text.includes(kind)) && text.includes('watching');
    });
    expect(await page.evaluate(() => (window as unknown as { loadedOnce?: number }).loadedOnce)).toBe(1);

    // A completed lease: its machine's state is `completed` (it may be claimed again). Claimed and completed
    // with no actor holding it, it is changed on its row (service/lease-cold.ts) and said to be stored, in words.
    await call(base, 'POST', `/subscriptions/${sub.body.subscription.id}/leases/complete`, { token: sub.body.token, body: { subject: 'incident-7' } });
    await page.waitForFunction(() => [...document.querySelectorAll('#actors tr')].some((tr) => tr.textContent?.includes('completed')));
    const lease = page.locator('#actors tr', { hasText: 'completed' });
    expect(await lease.locator('[data-actor-status]').textContent()).toBe('◇ stored as a row (an actor is made when needed)');
    expect(await page.locator('#actors th').allTextContents()).toEqual(['Kind', 'Id', 'Monitor', 'Machine', 'State', 'Actor', 'Chart']);
    expect(await page.textContent('#actors .actors-note')).toContain('whether the actor itself is running');

    // A cut data cell opens with its button (and the keyboard) and shows the whole data.
    await view('observations');
    const cell = '#observations td[data-cell]';
    await page.waitForSelector(cell);
    const key = await page.getAttribute(cell, 'data-cell');
    await page.focus(`${cell} .data-toggle`);
    await page.keyboard.press('Enter');
    await page.waitForSelector(`td[data-cell="${key}"].open pre`);
    expect(JSON.parse((await page.textContent(`td[data-cell="${key}"] pre`)) ?? '')).toBeTypeOf('object');
    // The filter's checkbox sits beside its words.
    const box = await page.locator('#obs-filter input[type=checkbox]').boundingBox();
    const label = await page.locator('#obs-filter label').boundingBox();
    expect(box!.width).toBeLessThan(30);
    expect(box!.x - label!.x).toBeLessThan(10);

    for (const name of ['monitors', 'subscriptions', 'leases', 'observations', 'runs', 'actors']) {
      await view(name);
      await page.screenshot({ path: `${shots}/${name}.png`, fullPage: true });
    }
  });

  it('shows only public monitors without a token, and follows the API origin rules', async () => {
    await call(base, 'POST', '/monitors', { body: { id: 'public-status', visibility: 'public' } });
    const anonymous = await context.newPage();
    try {
      await anonymous.goto(`${server.url}/ui`);
      await anonymous.evaluate(() => sessionStorage.clear());
      await anonymous.reload();
      await anonymous.waitForSelector('td[data-monitor="public-status"]');
      // {kind: "log"} without a path is a label, marked so.
      expect(await anonymous.textContent('#monitors [data-source="label"]')).toContain('label');
      expect(await anonymous.$('td[data-monitor="checkout-health"]')).toBeNull();
    } finally {
      await anonymous.close();
    }
    const foreign = await fetch(`${server.url}/ui/events`, { headers: { origin: 'http://evil.test', authorization: `Bearer ${admin}` } });
    expect(foreign.status).toBe(403);
    // fetch cannot set Host; a plain request can (DNS rebinding sends a foreign Host to loopback).
    const rebinding = await new Promise<number>((done, fail) => {
      const url = new URL(`${server.url}/ui`);
      request({ host: url.hostname, port: url.port, path: '/ui', headers: { host: 'evil.test' } }, (res) => {
        res.resume();
        done(res.statusCode ?? 0);
      })
        .on('error', fail)
        .end();
    });
    expect(rebinding).toBe(403);
  });
});
