// Noise under control (issue 29, point 5) in real Chromium, offline: a
// client refused again and again fills the monitor with rejections, yet the
// Observations tab shows the monitor's own observations, the bookkeeping
// folded by default; type, subject and actor filter on the server, so the
// table holds the latest matching observations, not a filtered few.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server.ts';
import { call, publish } from '../support/client.ts';
import { type DashboardBrowser, haveChromium, openDashboardBrowser } from '../support/dashboard-browser.ts';

const admin = 'vga_filter_test_token_0123456789abcd';

describe.skipIf(!haveChromium)('the observations filter in Chromium', () => {
  let server: RunningServer;
  let base: string;
  let browser: DashboardBrowser;
  let page: Page;

  beforeAll(async () => {
    server = await startServer({ port: 0, cloud: false, allowAdmin: admin, log: () => undefined });
    base = `${server.url}/mp/v0`;
    browser = await openDashboardBrowser(server.url);
    page = browser.page;
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const rows = () => page.locator('#observations tbody tr').allTextContents();

  it('folds bookkeeping by default and filters by type, subject and actor', async () => {
    const monitor = await call(base, 'POST', '/monitors', { body: { id: 'deploys', capabilities: ['observe', 'act'] } });
    const owner = monitor.body.owner_token;
    await publish(base, 'deploys', owner, { type: 'deploy.started', subject: 'web', data: {} });
    await publish(base, 'deploys', owner, { type: 'deploy.finished', subject: 'api', data: {} });
    // A subscriber without `act` keeps trying to claim: each try is a rejection on the monitor.
    const sub = await call(base, 'POST', '/subscriptions', { token: owner, body: { monitor: 'deploys', subscriber: 'agent:spammer', capabilities: ['observe'] } });
    for (let i = 0; i < 80; i++) {
      const refused = await call(base, 'POST', `/subscriptions/${sub.body.subscription.id}/leases/claim`, { token: sub.body.token, body: { subject: 'web' } });
      expect(refused.status).toBe(403);
    }

    await page.goto(`${server.url}/ui#token=${admin}`);
    await page.click('nav button[data-view="observations"]');
    await page.waitForFunction(() => document.querySelector('#observations')?.textContent?.includes('deploy.started'));
    let shown = await rows();
    expect(shown.some((r) => r.includes('deploy.finished'))).toBe(true);
    expect(shown.some((r) => r.includes('ai.vigil.monitor.'))).toBe(false);
    await page.screenshot({ path: `${browser.shots}/observations-filtered.png`, fullPage: true });

    // Bookkeeping shown: the rejections come back (the newest 20 of the monitor are all rejections).
    await page.check('#obs-filter input[name="bookkeeping"]');
    await page.waitForFunction(() => document.querySelector('#observations')?.textContent?.includes('ai.vigil.monitor.rejected'));
    shown = await rows();
    expect(shown.every((r) => r.includes('ai.vigil.monitor.rejected'))).toBe(true);

    // By actor (with the keyboard: type, Enter), by type, by subject.
    await page.fill('#obs-filter input[name="actor"]', 'agent:spammer');
    await page.focus('#obs-filter input[name="actor"]');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => [...document.querySelectorAll('#observations tbody tr')].every((r) => r.textContent?.includes('agent:spammer')));
    await page.click('#obs-filter button[type="button"]');
    await page.fill('#obs-filter input[name="type"]', 'deploy.finished');
    await page.click('#obs-filter button:not([type])');
    await page.waitForFunction(() => document.querySelectorAll('#observations tbody tr').length === 1);
    expect((await rows())[0]).toContain('api');
    await page.fill('#obs-filter input[name="type"]', '');
    await page.fill('#obs-filter input[name="subject"]', 'web');
    await page.click('#obs-filter button:not([type])');
    await page.waitForFunction(() => {
      const r = [...document.querySelectorAll('#observations tbody tr')];
      return r.length === 1 && r[0]?.textContent?.includes('deploy.started');
    });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForFunction(() => document.documentElement.scrollWidth <= 390);
    await page.setViewportSize({ width: 1280, height: 800 });

    const tooLong = await fetch(`${server.url}/ui/events?obs_subject=${'x'.repeat(201)}`, { headers: { authorization: `Bearer ${admin}` } });
    expect(tooLong.status).toBe(400);
    expect((await tooLong.json()).error).toBe('obs_subject must be at most 200 characters; got 201');
    expect(browser.errors).toEqual([]);
  });
});
