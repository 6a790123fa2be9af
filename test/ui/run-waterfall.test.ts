// Runs as waterfalls (issue 29, point 4) in real Chromium, offline: a real
// `vigil sequence` of a two-wave recipe (fake claude agents) publishes its run
// to the server (vigil.yml server:), and the Recipe runs tab draws a bar per
// step on a time axis, grouped by wave, the running bar growing, then every
// step's status in words and symbols, its tokens and cost, and, on click, what
// the server knows of the step.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardInChromium, haveChromium } from '../support/dashboard-browser.ts';
import { makeProject, type Project, startVigil, type VigilProcess } from '../recipes/helpers.ts';

const admin = 'vga_waterfall_test_token_0123456789';

describe.skipIf(!haveChromium)('run waterfalls in Chromium', () => {
  const ui = dashboardInChromium(admin);
  let project: Project;
  let run: VigilProcess | undefined;

  beforeAll(async () => {
    project = makeProject();
  });
  afterAll(async () => {
    run?.child.kill('SIGTERM');
    await run?.done.catch(() => undefined);
    project?.cleanup();
  });

  it('draws a published run as waves of bars that grow while running and end with status, tokens and cost', async () => {
    project.yml(`server:\n  base: ${ui.server.url}\n`);
    project.recipe({
      name: 'ship',
      canary: false,
      budget: { tokens: 1000 },
      steps: [
        { label: 'lint', args: ['SLEEP_MS=200'], wave: 1, concurrencySafe: true },
        { label: 'unit-tests', args: ['SLEEP_MS=6000'], wave: 1, concurrencySafe: true },
        { label: 'package', args: ['SLEEP_MS=200 SAY=packaged-vigil-0.1.0.tgz'], wave: 2 },
      ],
    });
    await ui.page.goto(`${ui.server.url}/ui#token=${admin}`);
    await ui.page.click('nav button[data-view="runs"]');
    run = startVigil(project, ['sequence', 'ship']);

    // While unit-tests runs its bar is striped, says "running" and grows with now.
    const running = '[data-step$="/unit-tests"] .wf-bar.running';
    await ui.page.waitForSelector(running);
    expect(await ui.page.textContent(running)).toMatch(/^▶ running · /);
    const before = (await ui.page.locator(running).boundingBox())?.width ?? 0;
    await ui.page.waitForFunction(
      ([sel, was]) => (document.querySelector(sel as string)?.getBoundingClientRect().width ?? 0) > (was as number),
      [running, before] as const,
    );
    await ui.page.screenshot({ path: `${ui.browser.shots}/run-waterfall-running.png`, fullPage: true });

    const result = await run.done;
    expect(result.code, result.stderr).toBe(0);
    await ui.page.waitForSelector('.waterfall .pill.succeeded');
    const labels = await ui.page.locator('.waterfall .wave-label').allTextContents();
    expect(labels).toEqual(['wave 1', 'wave 2']);
    for (const step of ['lint', 'unit-tests', 'package']) {
      expect(await ui.page.textContent(`[data-step$="/${step}"] .wf-bar`)).toMatch(/^✓ succeeded · /);
      expect(await ui.page.textContent(`[data-step$="/${step}"] .wf-usage`)).toMatch(/\d+ tok · \$\d/);
    }
    expect(await ui.page.textContent('.waterfall .wf-meta')).toMatch(/\d+ tokens · \$/);

    // A step opens with the keyboard and shows what the server was told of it.
    await ui.page.focus('[data-step$="/package"] button');
    await ui.page.keyboard.press('Enter');
    await ui.page.waitForSelector('[data-details$="/package"]');
    const details = await ui.page.textContent('[data-details$="/package"]');
    expect(details).toContain('status: succeeded (exit 0)');
    // Its last log lines, sent by the run when the step ended.
    expect(details).toContain('last lines of its log');
    expect(details).toContain('packaged-vigil-0.1.0.tgz');
    // The budget the run set, and how much of it the steps used.
    expect(await ui.page.textContent('.waterfall .wf-budget')).toMatch(/^budget: tokens \d+ of 1,000 \(\d+%\)$/);
    expect(await ui.page.evaluate(() => document.activeElement?.textContent)).toBe('package');
    await ui.page.screenshot({ path: `${ui.browser.shots}/run-waterfall.png`, fullPage: true });
    await ui.atPhoneWidth('run-waterfall-phone');
    expect(ui.browser.errors).toEqual([]);
  });

  it("nests a composite's child runs under it while they run", async () => {
    project.recipe({ name: 'one', canary: false, steps: [{ label: 'work', args: ['SLEEP_MS=4000'] }] });
    project.recipe({ name: 'fan', type: 'parallel', canary: false, recipe: 'one', vars: [{ N: '1' }, { N: '2' }] });
    run = startVigil(project, ['sequence', 'fan']);
    // Both children are drawn inside their parent's waterfall before either ends.
    await ui.page.waitForFunction(() =>
      [...document.querySelectorAll('.waterfall')].some(
        (w) => w.querySelectorAll(':scope > .waterfall').length === 2 && w.querySelectorAll(':scope > .waterfall .wf-bar.running').length > 0,
      ),
    );
    const result = await run.done;
    expect(result.code, result.stderr).toBe(0);
    expect(ui.browser.errors).toEqual([]);
  });
});
