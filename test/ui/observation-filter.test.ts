// Noise under control (issue 29, point 5) in real Chromium, offline: a
// client refused again and again fills the monitor with rejections, yet the
// Observations tab shows the monitor's own observations, the bookkeeping
// folded by default; type, subject and actor filter on the server, so the
// table holds the latest matching observations, not a filtered few.
import { describe, expect, it } from 'vitest';
import { call, publish } from '../support/client.ts';
import { dashboardInChromium } from '../support/dashboard-browser.ts';
import { chromiumFor } from '../support/requirements.ts';

const admin = 'vga_filter_test_token_0123456789abcd';

const haveChromium = chromiumFor('the observation filter browser tests');

describe.skipIf(!haveChromium)('the observations filter in Chromium', () => {
  const ui = dashboardInChromium(admin);

  const rows = () => ui.page.locator('#observations tbody tr').allTextContents();

  it('folds bookkeeping by default and filters by type, subject and actor', async () => {
    const monitor = await call(ui.base, 'POST', '/monitors', { body: { id: 'deploys', capabilities: ['observe', 'act'] } });
    const owner = monitor.body.owner_token;
    await publish(ui.base, 'deploys', owner, { type: 'deploy.started', subject: 'web', data: {} });
    await publish(ui.base, 'deploys', owner, { type: 'deploy.finished', subject: 'api', data: {} });
    // A subscriber without `act` keeps trying to claim: each try is a rejection on the monitor.
    const sub = await call(ui.base, 'POST', '/subscriptions', { token: owner, body: { monitor: 'deploys', subscriber: 'agent:spammer', capabilities: ['observe'] } });
    for (let i = 0; i < 80; i++) {
      const refused = await call(ui.base, 'POST', `/subscriptions/${sub.body.subscription.id}/leases/claim`, { token: sub.body.token, body: { subject: 'web' } });
      expect(refused.status).toBe(403);
    }

    await ui.page.goto(`${ui.server.url}/ui#token=${admin}`);
    await ui.page.click('nav button[data-view="observations"]');
    await ui.page.waitForFunction(() => document.querySelector('#observations')?.textContent?.includes('deploy.started'));
    let shown = await rows();
    expect(shown.some((r) => r.includes('deploy.finished'))).toBe(true);
    expect(shown.some((r) => r.includes('ai.vigil.monitor.'))).toBe(false);
    await ui.page.screenshot({ path: `${ui.browser.shots}/observations-filtered.png`, fullPage: true });

    // Bookkeeping shown: the rejections come back (the newest 20 of the monitor are all rejections).
    await ui.page.check('#obs-filter input[name="bookkeeping"]');
    await ui.page.waitForFunction(() => document.querySelector('#observations')?.textContent?.includes('ai.vigil.monitor.rejected'));
    shown = await rows();
    expect(shown.every((r) => r.includes('ai.vigil.monitor.rejected'))).toBe(true);

    // By actor (with the keyboard: type, Enter), by type, by subject.
    await ui.page.fill('#obs-filter input[name="actor"]', 'agent:spammer');
    await ui.page.focus('#obs-filter input[name="actor"]');
    await ui.page.keyboard.press('Enter');
    await ui.page.waitForFunction(() => [...document.querySelectorAll('#observations tbody tr')].every((r) => r.textContent?.includes('agent:spammer')));
    await ui.page.click('#obs-filter button[type="button"]');
    await ui.page.fill('#obs-filter input[name="type"]', 'deploy.finished');
    await ui.page.click('#obs-filter button:not([type])');
    await ui.page.waitForFunction(() => document.querySelectorAll('#observations tbody tr').length === 1);
    expect((await rows())[0]).toContain('api');
    await ui.page.fill('#obs-filter input[name="type"]', '');
    await ui.page.fill('#obs-filter input[name="subject"]', 'web');
    await ui.page.click('#obs-filter button:not([type])');
    await ui.page.waitForFunction(() => {
      const r = [...document.querySelectorAll('#observations tbody tr')];
      return r.length === 1 && r[0]?.textContent?.includes('deploy.started');
    });
    await ui.atPhoneWidth();

    const tooLong = await fetch(`${ui.server.url}/ui/events?obs_subject=${'x'.repeat(201)}`, { headers: { authorization: `Bearer ${admin}` } });
    expect(tooLong.status).toBe(400);
    expect((await tooLong.json()).error).toBe('obs_subject must be at most 200 characters; got 201');
    expect(ui.browser.errors).toEqual([]);
  });
});
