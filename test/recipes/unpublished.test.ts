// The file of observations a run could not publish (src/recipes/publish/unpublished.ts): taken by one
// process at a time, what a process that died had taken is taken again, and what was kept for another
// server stays kept for it.
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { projectHome } from '../../src/home/home.ts';
import { keepUnpublished, takeUnpublished } from '../../src/recipes/publish/unpublished.ts';
import { tempDir } from '../support/server-process.ts';

const run = (n: number) => ({ type: 'ai.vigil.recipe.run', subject: `run-${n}`, data: { status: 'failed' }, actor: `agent:vigil-run/run-${n}` });
let saved: string | undefined;
let projectRoot: string;

beforeEach(() => {
  saved = process.env.VIGIL_HOME;
  process.env.VIGIL_HOME = tempDir('vigil-home-');
  projectRoot = tempDir('vigil-project-');
});
afterEach(() => {
  if (saved === undefined) delete process.env.VIGIL_HOME;
  else process.env.VIGIL_HOME = saved;
});

describe('observations kept for later', () => {
  it('are taken once, oldest first, and the taken file goes when done', () => {
    expect(keepUnpublished(projectRoot, 'http://a', [run(1), run(2)])).toBe(2);
    expect(keepUnpublished(projectRoot, 'http://a', [run(3)])).toBe(1);
    const taken = takeUnpublished(projectRoot, 'http://a');
    expect(taken.observations.map((o) => o.subject)).toEqual(['run-1', 'run-2', 'run-3']);
    // Another runner taking now finds nothing: the file is this one's.
    expect(takeUnpublished(projectRoot, 'http://a').observations).toEqual([]);
    taken.done();
    expect(readdirSync(projectHome(projectRoot))).toEqual([]);
  });

  it('keep what was meant for another server for it', () => {
    keepUnpublished(projectRoot, 'http://a', [run(1)]);
    keepUnpublished(projectRoot, 'http://b', [run(2)]);
    const forA = takeUnpublished(projectRoot, 'http://a');
    forA.done();
    expect(forA.observations.map((o) => o.subject)).toEqual(['run-1']);
    expect(takeUnpublished(projectRoot, 'http://b').observations.map((o) => o.subject)).toEqual(['run-2']);
  });

  it('taken by a process that died (kill -9 before it published them) are taken again, before newer ones', () => {
    keepUnpublished(projectRoot, 'http://a', [run(2)]);
    // No process has this pid (above Linux's pid_max).
    writeFileSync(join(projectHome(projectRoot), 'unpublished.4194305.0.jsonl'), `${JSON.stringify({ base: 'http://a', ...run(1) })}\nnot json, a line cut short\n`);
    const taken = takeUnpublished(projectRoot, 'http://a');
    expect(taken.observations.map((o) => o.subject)).toEqual(['run-1', 'run-2']);
    taken.done();
    expect(readdirSync(projectHome(projectRoot))).toEqual([]);
  });
});
