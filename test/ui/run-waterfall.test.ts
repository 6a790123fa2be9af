// Runs as waterfalls (issue 29, point 4) in real Chromium, offline: a real
// `vigil sequence` of a two-wave recipe (fake claude agents) publishes its run
// to the server (vigil.yml server:), and the Recipe runs tab draws a bar per
// step on a time axis, grouped by wave, the running bar growing, then every
// step's status in words and symbols, its tokens and cost, and, on click, what
// the server knows of the step.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/server.ts';
import { type DashboardBrowser, haveChromium, openDashboardBrowser } from '../support/dashboard-browser.ts';
import { makeProject, type Project, startVigil, type VigilProcess } from '../recipes/helpers.ts';

const admin = 'vga_waterfall_test_token_0123456789';

describe.skipIf(!haveChromium)('run waterfalls in Chromium', () => {
  let server: RunningServer;
  let browser: DashboardBrowser;
  let page: Page;
  let project: Project;
  let run: VigilProcess | undefined;

  beforeAll(async () => {
    server = await startServer({ port: 0, cloud: false, allowAdmin: admin, log: () => undefined });
    browser = await openDashboardBrowser(server.url);
    page = browser.page;
    project = makeProject();
  });
  afterAll(async () => {
    run?.child.kill('SIGTERM');
    await run?.done.catch(() => undefined);
    await browser?.close();
    await server?.close();
    project?.cleanup();
  });

  it('draws a published run as waves of bars that grow while running and end with status, tokens and cost', async () => {
    project.yml(`server:\n  base: ${server.url}\n`);
    project.recipe({
      name: 'ship',
      canary: false,
      steps: [
        { label: 'lint', args: ['SLEEP_MS=200'], wave: 1, concurrencySafe: true },
        { label: 'unit-tests', args: ['SLEEP_MS=6000'], wave: 1, concurrencySafe: true },
        { label: 'package', args: ['SLEEP_MS=200'], wave: 2 },
      ],
    });
    await page.goto(`${server.url}/ui#token=${admin}`);
    await page.click('nav button[data-view="runs"]');
    run = startVigil(project, ['sequence', 'ship']);

    // While unit-tests runs its bar is striped, says "running" and grows with now.
    const running = '[data-step$="/unit-tests"] .wf-bar.running';
    await page.waitForSelector(running);
    expect(await page.textContent(running)).toMatch(/^▶ running · /);
    const before = (await page.locator(running).boundingBox())?.width ?? 0;
    await page.waitForFunction(
      ([sel, was]) => (document.querySelector(sel as string)?.getBoundingClientRect().width ?? 0) > (was as number),
      [running, before] as const,
    );
    await page.screenshot({ path: `${browser.shots}/run-waterfall-running.png`, fullPage: true });

    const result = await run.done;
    expect(result.code, result.stderr).toBe(0);
    await page.waitForSelector('.waterfall .pill.succeeded');
    const labels = await page.locator('.waterfall .wave-label').allTextContents();
    expect(labels).toEqual(['wave 1', 'wave 2']);
    for (const step of ['lint', 'unit-tests', 'package']) {
      expect(await page.textContent(`[data-step$="/${step}"] .wf-bar`)).toMatch(/^✓ succeeded · /);
      expect(await page.textContent(`[data-step$="/${step}"] .wf-usage`)).toMatch(/\d+ tok · \$\d/);
    }
    expect(await page.textContent('.waterfall .wf-meta')).toMatch(/\d+ tokens · \$/);

    // A step opens with the keyboard and shows what the server was told of it.
    await page.focus('[data-step$="/package"] button');
    await page.keyboard.press('Enter');
    await page.waitForSelector('[data-details$="/package"]');
    expect(await page.textContent('[data-details$="/package"]')).toContain('status: succeeded (exit 0)');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('package');
    await page.screenshot({ path: `${browser.shots}/run-waterfall.png`, fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForFunction(() => document.documentElement.scrollWidth <= 390);
    await page.screenshot({ path: `${browser.shots}/run-waterfall-phone.png`, fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(browser.errors).toEqual([]);
  });
});
