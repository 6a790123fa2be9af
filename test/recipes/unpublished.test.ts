// The file of observations a run could not publish (src/recipes/publish/unpublished.ts): taken by one
// process at a time, what a process that died had taken is taken again, and what was kept for another
// server stays kept for it.
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { projectHome } from '../../src/home/home.ts';
import { ServerPublisher } from '../../src/recipes/publish/server-publisher.ts';
import { keepUnpublished, takeUnpublished } from '../../src/recipes/publish/unpublished.ts';
import { stablePort, tempDir } from '../support/server-process.ts';

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

  it("a backlog past the queue's 1,000 does not crowd out what the run itself could not publish: all is kept again", async () => {
    keepUnpublished(projectRoot, 'http://127.0.0.1:1', Array.from({ length: 1200 }, (_, i) => run(i)));
    const said: string[] = [];
    // A free port nothing listens on: the server is away.
    const base = `http://127.0.0.1:${await stablePort()}`;
    keepUnpublished(projectRoot, base, Array.from({ length: 1200 }, (_, i) => run(i)));
    const publisher = (await ServerPublisher.connect({ base }, projectRoot, (l) => said.push(l), 'agent:test', { keepTrying: true, keepUnpublished: true }))!;
    for (let i = 0; i < 5; i++) publisher.publish('ai.vigil.recipe.run', `new-${i}`, { status: 'failed' });
    await publisher.flush();
    expect(said.join('\n')).toContain('1205 observations were not published: the server was away; kept in');
    expect(said.join('\n')).not.toContain('no room');
    const again = takeUnpublished(projectRoot, base);
    again.done();
    expect(again.observations.slice(-5).map((o) => o.subject)).toEqual(['new-0', 'new-1', 'new-2', 'new-3', 'new-4']);
    // What was kept for another server stayed kept for it.
    expect(takeUnpublished(projectRoot, 'http://127.0.0.1:1').observations).toHaveLength(1200);
  });
});
