// Runs as waterfalls (issue 29, point 4; issue 49, point 3) in real Chromium,
// offline: a real `vigil sequence` of a two-wave recipe (fake claude agents)
// publishes its run to the server (vigil.yml server:), and the Recipe runs tab
// draws a bar per step on a time axis, grouped by wave, the running bar
// growing, then every step's status in words and symbols, its tokens and cost,
// and, on click, what the server knows of the step. A parallel, an adversarial
// and a pipeline are each one timeline, and every duration drawn is the run
// records' own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardInChromium } from '../support/dashboard-browser.ts';
import { chromiumFor } from '../support/requirements.ts';
import { makeProject, type Project, runsOf, runVigil, startVigil, type VigilProcess } from '../recipes/helpers.ts';

const admin = 'vga_waterfall_test_token_0123456789';

const haveChromium = chromiumFor('the run waterfall browser tests');

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
    const labels = await ui.page.locator('.waterfall[data-run] .wave-label').allTextContents();
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

  it('draws a parallel, an adversarial and a pipeline each as one timeline, with the durations of the run records', async () => {
    project.recipe({ name: 'one', canary: false, steps: [{ label: 'plan', args: ['SLEEP_MS=300'] }, { label: 'work', args: ['SLEEP_MS=1200'] }] });
    project.recipe({ name: 'verdict', canary: false, steps: [{ label: 'judge', args: ['SAY={"winner":"blue","reason":"holds"}'] }] });
    project.recipe({ name: 'fan', type: 'parallel', canary: false, transfer_mode: 'none', recipe: 'one', fanout: 4, vars: [{ N: '1' }, { N: '2' }, { N: '3' }, { N: '4' }] });
    project.recipe({ name: 'duel', type: 'adversarial', canary: false, transfer_mode: 'none', rounds: 1, blue: { recipe: 'one' }, red: { recipe: 'one' }, judge: { recipe: 'verdict' } });
    project.recipe({ name: 'chain', type: 'pipeline', canary: false, sequences: [{ name: 'one' }, { name: 'one' }, { name: 'verdict', on: 'failure' }] });

    // While the parallel runs, its four children are drawn in its timeline, running side by side.
    run = startVigil(project, ['sequence', 'fan']);
    await ui.page.waitForFunction(() => [...document.querySelectorAll('.waterfall')].some((w) => w.querySelectorAll('.wf-run .wf-bar.running').length >= 3));
    const fan = await run.done;
    expect(fan.code, fan.stderr).toBe(0);
    for (const recipe of ['duel', 'chain']) {
      const r = await runVigil(project, ['sequence', recipe]);
      expect(r.code, r.stderr).toBe(0);
    }
    await ui.page.waitForFunction(() => document.querySelectorAll('.waterfall h3 .pill.succeeded').length >= 4);

    // Every duration drawn is the one in the run records (`vigil runs <id>` prints the same).
    const secs = (from: string, to: string) => `${((Date.parse(to) - Date.parse(from)) / 1000).toFixed(1)} s`;
    const roots = runsOf(project).filter((r) => !r.parent && r.type !== 'sequence');
    expect(roots.map((r) => r.recipe).sort()).toEqual(['chain', 'duel', 'fan']);
    let compared = 0;
    for (const root of roots) {
      const section = `.waterfall[data-run="${root.id}"]`;
      expect(await ui.page.textContent(`${section} .wf-meta`)).toContain(secs(root.started, root.ended!));
      for (const r of runsOf(project).filter((x) => x.id === root.id || x.parent === root.id)) {
        expect(await ui.page.textContent(`${section} [data-run-row="${r.id}"] .wf-bar`)).toBe(`✓ succeeded · ${secs(r.started, r.ended!)}`);
        compared++;
        for (const step of r.steps) {
          expect(await ui.page.textContent(`${section} [data-step="${r.id}/${step.label}"] .wf-bar`)).toBe(`✓ succeeded · ${secs(step.started!, step.ended!)}`);
          compared++;
        }
      }
      // One axis: every bar of the tree is placed on the root's time scale, none before its start.
      const lefts = await ui.page.$$eval(`${section} .wf-bar`, (bars) => bars.map((b) => Number.parseFloat((b as HTMLElement).style.left)));
      expect(Math.min(...lefts)).toBe(0);
    }
    // 3 roots; the parallel 4 children (8 steps), the adversarial 3 (5 steps), the pipeline 2 (4 steps).
    expect(compared).toBe(3 + 4 + 8 + 3 + 5 + 2 + 4);

    // The parallel: four children side by side (they overlap in time), none in a wave.
    const fanRun = roots.find((r) => r.recipe === 'fan')!;
    expect(await ui.page.locator(`.waterfall[data-run="${fanRun.id}"] .wf-run:not(.wf-unrun)`).count()).toBe(5);
    expect(await ui.page.locator(`.waterfall[data-run="${fanRun.id}"] .wave-label`).count()).toBe(0);
    // The adversarial: blue, then red, then the judge, in that order on the axis.
    const duel = roots.find((r) => r.recipe === 'duel')!;
    const roles = await ui.page.$$eval(`.waterfall[data-run="${duel.id}"] .wf-run .wf-label`, (ls) => ls.map((l) => l.textContent));
    expect(roles).toEqual(['duel', 'blue round 1 · one', 'red round 1 · one', 'judge round 1 · verdict']);
    const starts = await ui.page.$$eval(`.waterfall[data-run="${duel.id}"] .wf-run .wf-bar`, (bars) => bars.map((b) => Number.parseFloat((b as HTMLElement).style.left)));
    expect(starts.slice(1)).toEqual([...starts.slice(1)].sort((a, b) => a - b));
    // The pipeline: its third entry did not run, and says why.
    const chain = roots.find((r) => r.recipe === 'chain')!;
    expect(await ui.page.textContent(`.waterfall[data-run="${chain.id}"] .wf-unrun`)).toContain('⊘ skipped: on: failure');

    // A child folds away with its button, and opens again.
    const child = runsOf(project).find((r) => r.parent === duel.id)!;
    await ui.page.focus(`[data-run-row="${child.id}"] .wf-toggle`);
    await ui.page.keyboard.press('Enter');
    await ui.page.waitForFunction((id) => !document.querySelector(`[data-step^="${id}/"]`), child.id);
    expect(await ui.page.getAttribute(`[data-run-row="${child.id}"] .wf-toggle`, 'aria-expanded')).toBe('false');
    await ui.page.keyboard.press('Enter');
    await ui.page.waitForSelector(`[data-step^="${child.id}/"]`);

    await ui.page.evaluate(() => window.scrollTo(0, 0));
    await ui.page.screenshot({ path: `${ui.browser.shots}/run-timeline-composites.png`, fullPage: true });
    await ui.atPhoneWidth('run-timeline-composites-phone');
    expect(ui.browser.errors).toEqual([]);
  });
});
