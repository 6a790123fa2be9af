// The tutorials, run as a reader runs them (test/support/doc-page.ts): each
// page's ```sh blocks in order, in a fresh folder; the pages check what they
// promise themselves. Apart from the how-to guides so that the two files run
// side by side.
import { describe, expect, it } from 'vitest';
import { expectPageRuns as runs } from '../support/doc-page.ts';
import { scaled } from '../support/time-scale.ts';

const limit = scaled(180_000);


describe('tutorials', { timeout: limit + 10_000 }, () => {
  it('the monitor server in five minutes', async () => {
    const output = await runs('tutorials/monitors.md', limit);
    expect(output).toMatch(/"action":"complete"/);
  });

  it('recipes in five minutes', async () => {
    const output = await runs('tutorials/recipes.md', limit);
    expect(output).toMatch(/reacted to ci\.build\.failed on job-42/);
  });
});
