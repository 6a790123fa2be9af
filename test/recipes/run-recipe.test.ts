// runRecipe (sdk.sequence.run's runner): the run it answers with is the run
// the `vigil sequence` process it started reports, never a run found by pid —
// pids are reused, so another record can name the same pid.
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runRecipe } from '../../src/recipes/run-recipe.ts';
import { scaled } from '../support/time-scale.ts';
import { makeProject, type Project } from './helpers.ts';

let onSpawn: ((child: ChildProcess) => void) | null = null;
vi.mock('node:child_process', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:child_process')>();
  return {
    ...real,
    spawn: ((...args: Parameters<typeof real.spawn>) => {
      const child = real.spawn(...args);
      onSpawn?.(child);
      return child;
    }) as typeof real.spawn,
  };
});

let project: Project;
beforeEach(() => {
  project = makeProject();
  project.yml(`providers:\n  fake:\n    type: custom\n    command: ${project.agent}\n`);
});
afterEach(() => {
  onSpawn = null;
  project.cleanup();
});

function env(): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('VIGIL_') && !k.startsWith('VITEST')) base[k] = v;
  return { ...base, HOME: project.home, PATH: `${project.bin}:${process.env.PATH}`, FAKE_LOG: project.log, TMPDIR: project.tmp };
}

function run(name: string) {
  return runRecipe({ name, args: [], cwd: project.root, projectRoot: project.root, env: env(), signal: new AbortController().signal });
}

describe('runRecipe', () => {
  it('two concurrent runs of one project each answer with their own run and output', { timeout: scaled(120_000) }, async () => {
    for (const who of ['one', 'two']) project.recipe({ name: who, canary: false, steps: [{ label: 'hi', backend: 'fake', args: [`SAY=from-${who}`] }] });
    const [one, two] = await Promise.all([run('one'), run('two')]);
    expect(one.output).toContain('from-one');
    expect(two.output).toContain('from-two');
    expect(one.run_id).not.toBe(two.run_id);
    const recipeOf = (id: string | null) => (id ? (JSON.parse(readFileSync(join(project.root, '.vigil', 'runs', id, 'run.json'), 'utf8')) as { recipe: string }).recipe : null);
    expect(recipeOf(one.run_id)).toBe('one');
    expect(recipeOf(two.run_id)).toBe('two');
  });

  it('takes no other record for its run, even one that names the same pid (a pid the system reused)', { timeout: scaled(120_000) }, async () => {
    project.recipe({ name: 'greet', canary: false, steps: [{ label: 'hi', backend: 'fake', args: ['SAY=fresh'] }] });
    // A record an earlier runner left, naming the pid the new runner got, whose id sorts after the new run's.
    const stale = '99991231-235959-ffff';
    onSpawn = (child) => {
      const dir = join(project.root, '.vigil', 'runs', stale);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'output.txt'), 'stale output');
      writeFileSync(
        join(dir, 'run.json'),
        JSON.stringify({ id: stale, recipe: 'greet', recipe_file: '', type: 'sequence', status: 'succeeded', pid: child.pid, started: '9999-12-31T23:59:59.000Z', ended: '9999-12-31T23:59:59.000Z', steps: [] }),
      );
    };
    const result = await run('greet');
    expect(result.run_id).not.toBe(stale);
    expect(result.output).toContain('fresh');
    expect(result.output).not.toContain('stale');
  });

  it('no step sees the descriptor the runner reports on', { timeout: scaled(120_000) }, async () => {
    project.recipe({ name: 'peek', canary: false, backend: 'shell', steps: [{ label: 'env', prompt: 'if env | grep -q ^VIGIL_RUN_ID_FD=; then echo leaked; else echo clean; fi' }] });
    const result = await run('peek');
    expect(result.output.trim()).toBe('clean');
  });
});

