// The tutorials, run as a reader runs them (test/support/doc-page.ts): each
// page's ```sh blocks in order, in a fresh folder; the pages check what they
// promise themselves. Apart from the how-to guides so that the two files run
// side by side.
//
// The recipes tutorial is the README's quick start (issue 31 point 3): `vigil
// init`, every recipe type it writes run on the local agent, and the sentinel
// under `vigil daemon`. It is run here only, and what it left is checked here;
// test/cli/init.test.ts tests `vigil init` itself.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectPageRuns as runs, vigilAfterPage } from '../support/doc-page.ts';
import { scaled } from '../support/time-scale.ts';

const limit = scaled(180_000);


describe('tutorials', { timeout: limit + 10_000 }, () => {
  it('the monitor server in five minutes', async () => {
    const { output } = await runs('tutorials/monitors.md', limit);
    expect(output).toMatch(/"action":"complete"/);
  });

  it('recipes in five minutes: the quick start runs every recipe type and the sentinel reacts under vigil daemon', async () => {
    const run = await runs('tutorials/recipes.md', limit);
    const project = join(run.folder, 'project');
    // What the quick start says it leaves: greetings from every run, and a finding in CIR.
    expect(readdirSync(join(project, 'greetings')).sort()).toEqual(
      ['ada', 'alice', 'blue', 'bob', 'grace', 'left', 'linus', 'night', 'right', 'world'].map((n) => `${n}.txt`),
    );
    const found = vigilAfterPage(run, ['cir', 'query', '--type', 'finding', '--json']);
    expect(found.code, found.stderr).toBe(0);
    expect(JSON.parse(found.stdout).map((s: { body: string }) => s.body)).toContain('the quick start ran');
    // The sentinel reacted to the failed build, once.
    expect(readFileSync(join(project, 'sentinel-reactions.txt'), 'utf8')).toBe('reacted to ci.build.failed on job-42\n');
  });
});
