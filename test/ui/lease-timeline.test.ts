// Leases over time (issue 29, point 3) in real Chromium, offline: per
// monitor a row per subject shows who held it when, renewals, completions,
// expiries, rejects and the dead letter, as symbols with their names, with
// "now" moving, live as the API changes the leases.
import { describe, expect, it } from 'vitest';
import { call, publish } from '../support/client.ts';
import { dashboardInChromium } from '../support/dashboard-browser.ts';
import { chromiumFor } from '../support/requirements.ts';

const admin = 'vga_timeline_test_token_0123456789ab';

const haveChromium = chromiumFor('the lease timeline browser tests');

describe.skipIf(!haveChromium)('lease timelines in Chromium', () => {
  const ui = dashboardInChromium(admin);

  const lane = (subject: string) => `[data-timeline="builds"] .lane-row:has(code[title="${subject}"])`;

  it('draws holdings, renewals, completions, expiries and dead letters per subject, live', async () => {
    const monitor = await call(ui.base, 'POST', '/monitors', { body: { id: 'builds', capabilities: ['observe', 'act'] } });
    const owner = monitor.body.owner_token;
    for (const subject of ['build-1', 'build-2', 'build-3']) await publish(ui.base, 'builds', owner, { type: 'work.build', subject, data: {} });
    const worker = async (name: string) => {
      const sub = await call(ui.base, 'POST', '/subscriptions', { token: owner, body: { monitor: 'builds', subscriber: name, capabilities: ['act'] } });
      return (action: string, body: Record<string, unknown>) =>
        call(ui.base, 'POST', `/subscriptions/${sub.body.subscription.id}/leases/${action}`, { token: sub.body.token, body });
    };
    const alice = await worker('agent:alice');
    const bob = await worker('agent:bob');

    await ui.page.goto(`${ui.server.url}/ui#token=${admin}`);
    await ui.page.click('nav button[data-view="leases"]');

    expect((await alice('claim', { subject: 'build-1', lease_duration_seconds: 300 })).status).toBe(201);
    await alice('renew', { subject: 'build-1', lease_duration_seconds: 300 });
    await alice('complete', { subject: 'build-1', outcome: { ok: true } });
    expect((await bob('claim', { subject: 'build-2', lease_duration_seconds: 1, note: 'run r-7 step compile' })).status).toBe(201);
    for (let i = 0; i < 5; i++) {
      expect((await alice('claim', { subject: 'build-3', lease_duration_seconds: 300 })).status).toBe(201);
      await alice('reject', { subject: 'build-3', reason: 'flaky' });
    }

    await ui.page.waitForSelector(`${lane('build-1')} .moment.complete`);
    expect(await ui.page.getAttribute(`${lane('build-1')} .moment.renew`, 'aria-label')).toMatch(/^renew by agent:alice at /);
    expect(await ui.page.textContent(`${lane('build-1')} .hold`)).toBe('agent:alice');
    // Bob's 1 s lease runs out on the server's timer: the timeline shows the expiry without a reload.
    await ui.page.waitForSelector(`${lane('build-2')} .moment.expired`);
    // A claim's note (a concurrency slot names its run and step) says what the holding was for.
    expect(await ui.page.textContent(`${lane('build-2')} .hold`)).toBe('run r-7 step compile (agent:bob)');
    expect(await ui.page.getAttribute(`${lane('build-2')} .hold`, 'title')).toMatch(/^agent:bob held build-2 .+: run r-7 step compile$/);
    expect(await ui.page.getAttribute(`${lane('build-2')} .moment.claim`, 'aria-label')).toMatch(/^claim by agent:bob at .+: run r-7 step compile$/);
    await ui.page.waitForSelector(`${lane('build-3')} .moment.dead_lettered`);
    expect(await ui.page.locator(`${lane('build-3')} .moment.reject`).count()).toBe(4);
    expect(await ui.page.textContent(`${lane('build-3')} .dead-zone`)).toBe('dead-lettered');

    // "now" moves: the axis' first time changes between redraws.
    const first = await ui.page.textContent('[data-timeline="builds"] .axis-lane span');
    await ui.page.waitForFunction((was) => document.querySelector('[data-timeline="builds"] .axis-lane span')?.textContent !== was, first);
    // The span is chosen with the keyboard, and the focus survives the redraw.
    await ui.page.focus('[data-focus="span-60000"]');
    await ui.page.keyboard.press('Enter');
    await ui.page.waitForSelector('[data-focus="span-60000"][aria-pressed="true"]');
    await alice('claim', { subject: 'build-1', lease_duration_seconds: 120 });
    await ui.page.waitForFunction(() => document.querySelectorAll('[data-timeline="builds"] .hold-until').length > 0);
    expect(await ui.page.evaluate(() => document.activeElement?.getAttribute('data-focus'))).toBe('span-60000');
    await ui.page.screenshot({ path: `${ui.browser.shots}/lease-timeline.png`, fullPage: true });
    await ui.atPhoneWidth('lease-timeline-phone');
    expect(ui.browser.errors).toEqual([]);
  });
});
