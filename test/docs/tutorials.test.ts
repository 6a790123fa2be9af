// The tutorials, run as a reader runs them (test/support/doc-page.ts): each
// page's ```sh blocks in order, in a fresh folder; the pages check what they
// promise themselves. Apart from the how-to guides so that the two files run
// side by side.
import { describe, expect, it } from 'vitest';
import { runDocPage } from '../support/doc-page.ts';
import { scaled } from '../support/time-scale.ts';

const limit = scaled(180_000);

async function expectPageRuns(page: string): Promise<string> {
  const run = await runDocPage(page, { limitMs: limit });
  expect(run.code, `${page} failed (exit ${run.code}):\n${run.output}`).toBe(0);
  return run.output;
}

describe('tutorials', { timeout: limit + 10_000 }, () => {
  it('the monitor server in five minutes', async () => {
    const output = await expectPageRuns('tutorials/monitors.md');
    expect(output).toMatch(/"action":"complete"/);
  });

  it('recipes in five minutes', async () => {
    const output = await expectPageRuns('tutorials/recipes.md');
    expect(output).toMatch(/reacted to ci\.build\.failed on job-42/);
  });
});
