// Monitors at a glance (issue 29, point 2) in real Chromium, offline: each
// monitor's card shows its observations per minute as a sparkline, the time
// since its source's last contact judged against ttl_seconds in words and
// symbols (fresh, then stale once the source stops answering), and its open
// contradictions and gaps as badges, all live.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, publish } from '../support/client.ts';
import { dashboardInChromium } from '../support/dashboard-browser.ts';
import { chromiumFor } from '../support/requirements.ts';

const admin = 'vga_glance_test_token_0123456789abcd';

const haveChromium = chromiumFor('the glance browser tests');

describe.skipIf(!haveChromium)('monitors at a glance in Chromium', () => {
  const ui = dashboardInChromium(admin, { sources: { kinds: ['http'], minBackoffMs: 200, maxBackoffMs: 400 } });
  let target: Server;

  beforeAll(async () => {
    target = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((d) => target.listen(0, '127.0.0.1', d));
  });
  afterAll(async () => {
    target?.closeAllConnections();
    await new Promise((d) => target?.close(d));
  });

  const card = (id: string) => `[data-glance="${id}"]`;

  it('draws rates, judges source contact against the ttl and badges contradictions, live', async () => {
    const url = `http://127.0.0.1:${(target.address() as AddressInfo).port}/`;
    const orders = await call(ui.base, 'POST', '/monitors', { body: { id: 'orders', ttl_seconds: 3600, source: { kind: 'http', url, interval_s: 1 } } });
    const payments = await call(ui.base, 'POST', '/monitors', { body: { id: 'payments', ttl_seconds: 2, source: { kind: 'http', url, interval_s: 1 } } });
    await call(ui.base, 'POST', '/monitors', { body: { id: 'manual-notes' } });
    for (let i = 0; i < 7; i++) await publish(ui.base, 'orders', orders.body.owner_token, { type: 'order.placed', subject: `order-${i}`, data: { n: i } });
    await publish(ui.base, 'payments', payments.body.owner_token, { type: 'ai.vigil.monitor.contradiction', subject: 'ledger' });

    await ui.page.goto(`${ui.server.url}/ui#token=${admin}`);
    await ui.page.waitForSelector(`${card('orders')} .badge.fresh`);
    // 7 published plus the source's own observations, all in the current minute.
    await ui.page.waitForFunction((sel) => {
      const label = document.querySelector(`${sel} svg.spark`)?.getAttribute('aria-label') ?? '';
      return Number(/^(\d+) observations/.exec(label)?.[1] ?? 0) >= 7;
    }, card('orders'));
    expect(await ui.page.locator(`${card('orders')} svg.spark rect`).count()).toBeGreaterThan(0);
    expect(await ui.page.textContent(`${card('payments')} .badge.contradiction`)).toContain('1 contradiction open');
    expect(await ui.page.textContent(`${card('manual-notes')} .badges`)).toContain('no contact yet');
    // A new monitor made the README's way: its gaps are advice, not alarms, each explained on the card.
    expect(await ui.page.locator(`${card('manual-notes')} .badge.advice-badge`).allTextContents()).toEqual([
      'ℹ no event provenance',
      'ℹ no subscribers',
      'ℹ unattested origin',
    ]);
    expect(await ui.page.locator(`${card('manual-notes')} .badge.gap-badge`).count()).toBe(0);
    await ui.page.focus(`${card('manual-notes')} .advice-toggle`);
    await ui.page.keyboard.press('Enter');
    await ui.page.waitForSelector(`${card('manual-notes')} dl.advice`);
    const explained = await ui.page.textContent(`${card('manual-notes')} dl.advice`);
    for (const words of ['source_ref', 'Subscribe (vigil watch', '--registration-token']) expect(explained).toContain(words);
    expect(await ui.page.getAttribute(`${card('manual-notes')} .advice-toggle`, 'aria-expanded')).toBe('true');
    // The monitors' table says the same in a word, with the explanation as its tooltip.
    const cell = ui.page.locator('#monitors td[data-monitor="manual-notes"] ~ td .gap.advice').first();
    expect(await cell.getAttribute('title')).toContain('source_ref');

    // The source stops answering: past its 2 s ttl the card says stale, in words and with ✕, without a reload.
    await ui.page.waitForSelector(`${card('payments')} .badge.fresh, ${card('payments')} .badge.aging`);
    target.closeAllConnections();
    await new Promise((d) => target.close(d));
    await ui.page.waitForSelector(`${card('payments')} .badge.stale`);
    expect(await ui.page.textContent(`${card('payments')} .badge.stale`)).toMatch(/✕ stale · \d+ s ago \/ ttl 2 s/);
    await ui.page.screenshot({ path: `${ui.browser.shots}/glance.png`, fullPage: true });

    // Keyboard: Tab reaches the cards; the focus survives the redraw every view brings.
    // (A card's advice button comes between two cards.)
    await ui.page.focus(card('orders'));
    for (let i = 0; i < 3 && (await ui.page.evaluate(() => document.activeElement?.getAttribute('data-glance'))) !== 'payments'; i++) await ui.page.keyboard.press('Tab');
    await ui.page.waitForFunction(() => document.activeElement?.getAttribute('data-glance') === 'payments');
    await ui.page.waitForFunction(() => document.querySelector('#live')?.textContent?.includes('live'));
    await ui.atPhoneWidth('glance-phone');
    expect(ui.browser.errors.filter((e) => !e.includes('net::'))).toEqual([]);
  });
});
