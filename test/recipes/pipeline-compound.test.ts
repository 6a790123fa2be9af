// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${NAME} in these strings is vigil's own variable syntax, substituted by the runner
// pipeline and compound recipes end to end: entry conditions, pre commands,
// model and --from inside a pipeline; a layer DAG with a shared CIR scope.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { childRuns, makeShProject, outputOf, rootRun, shRecipe } from './composite-helpers.ts';
import { type Project, runVigil } from './helpers.ts';

// Each test runs many real processes (a loaded machine makes that slow).
vi.setConfig({ testTimeout: 180_000 });

let project: Project;
afterEach(() => project?.cleanup());

describe('pipeline', () => {
  it('runs entries in order by their on condition, skipping the others with the reason', async () => {
    project = makeShProject({ git: false });
    shRecipe(project, 'ok', 'echo ok-${WHO} >> trail.txt; echo said ${WHO}');
    shRecipe(project, 'bad', 'echo bad >> trail.txt; exit 4');
    project.recipe({
      name: 'flow',
      type: 'pipeline',
      sequences: [
        { name: 'ok', vars: { WHO: 'first' } },
        { name: 'bad' },
        { name: 'ok', vars: { WHO: 'skipped' } },
        { name: 'ok', on: 'failure', vars: { WHO: 'cleanup' } },
        { name: 'ok', on: 'always', vars: { WHO: 'report' } },
      ],
    });
    const r = await runVigil(project, ['sequence', 'flow']);
    expect(r.code).toBe(1);
    expect(readFileSync(join(project.root, 'trail.txt'), 'utf8')).toBe('ok-first\nbad\nok-cleanup\nok-report\n');
    const run = rootRun(project);
    expect(run.status).toBe('failed');
    expect(run.children!.map((c) => c.status)).toEqual(['succeeded', 'failed', 'skipped', 'succeeded', 'succeeded']);
    expect(run.children![2]!.reason).toContain('on: success, but entry 2 ("bad") failed');
    expect(outputOf(project, run)).toContain('said report');
  });

  it('runs pre commands in the entry workspace first, replaces the model, and fails the entry on a failing pre', async () => {
    project = makeShProject({ git: false });
    project.file('sub/.keep', '');
    shRecipe(project, 'show', 'echo "model=$$VIGIL_MODEL pre=$$(cat pre.txt)" > seen.txt');
    project.recipe({
      name: 'flow',
      type: 'pipeline',
      sequences: [
        { name: 'show', workspace: 'sub', model: 'tiny-1', pre: ['echo ${TAG} > pre.txt'], vars: { TAG: 'hello' } },
        { name: 'show', pre: ['exit 7'], on: 'always' },
      ],
    });
    const r = await runVigil(project, ['sequence', 'flow']);
    expect(r.code).toBe(1);
    expect(readFileSync(join(project.root, 'sub', 'seen.txt'), 'utf8')).toBe('model=tiny-1 pre=hello\n');
    const run = rootRun(project);
    expect(run.children![1]!.status).toBe('failed');
    expect(run.children![1]!.reason).toContain('pre[0] "exit 7" exited with code 7');
  });

  it('starts an entry at its `from` step, reusing what succeeded in its latest run', async () => {
    project = makeShProject({ git: false });
    project.recipe({
      name: 'two',
      canary: false,
      steps: [
        { label: 'prepare', args: ['echo prepared >> log.txt'] },
        { label: 'finish', args: ['echo finished >> log.txt'] },
      ],
    });
    project.recipe({ name: 'again', type: 'pipeline', sequences: [{ name: 'two', from: 'finish' }] });
    expect((await runVigil(project, ['sequence', 'two'])).code).toBe(0);
    const r = await runVigil(project, ['sequence', 'again']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(readFileSync(join(project.root, 'log.txt'), 'utf8')).toBe('prepared\nfinished\nfinished\n');
    const [child] = childRuns(project, rootRun(project));
    expect(child!.steps.map((s) => s.status)).toEqual(['reused', 'succeeded']);
    expect(child!.from_label).toBe('finish');
  });
});

describe('compound', () => {
  it('runs independent layers at once, gives later layers LAYER_<NAME>_OUTPUT and the shared CIR scope, and captures layer outputs', async () => {
    project = makeShProject({ git: false });
    shRecipe(project, 'research', 'echo "$$VIGIL_CIR_SCOPE" > scope-${WHAT}.txt; echo "found ${WHAT}"');
    shRecipe(project, 'write', 'cat ${LAYER_API_DOCS_OUTPUT} ${LAYER_DB_OUTPUT} > combined.txt; echo written');
    project.recipe({
      name: 'build',
      type: 'compound',
      layers: [
        { name: 'api-docs', sequence: 'research', vars: { WHAT: 'api' } },
        { name: 'db', sequence: 'research', depends_on: [], vars: { WHAT: 'db' } },
        { name: 'final', sequence: 'write', depends_on: ['api-docs', 'db'] },
      ],
    });
    const r = await runVigil(project, ['sequence', 'build']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const run = rootRun(project);
    expect(readFileSync(join(project.root, 'scope-api.txt'), 'utf8')).toBe(`run:${run.id}\n`);
    expect(readFileSync(join(project.root, 'scope-db.txt'), 'utf8')).toBe(`run:${run.id}\n`);
    expect(readFileSync(join(project.root, 'combined.txt'), 'utf8')).toBe('found api\nfound db\n');
    expect(outputOf(project, run)).toBe('written\n');
    const [api, db] = childRuns(project, run);
    // The two first layers overlapped.
    expect(Date.parse(db!.started)).toBeLessThan(Date.parse(api!.ended!));
    const q = await runVigil(project, ['cir', 'query', '--scope', `run:${run.id}`, '--type', 'layer.output', '--json']);
    expect(q.code, q.stderr).toBe(0);
    const signals = JSON.parse(q.stdout) as Array<{ source: string; body: string }>;
    expect(signals.map((s) => s.source).sort()).toEqual(['layer:api-docs', 'layer:db', 'layer:final']);
  });

  it('refuses a layer cycle before anything starts', async () => {
    project = makeShProject({ git: false });
    shRecipe(project, 'x', 'true');
    project.recipe({ name: 'loop', type: 'compound', layers: [{ name: 'a', sequence: 'x', depends_on: ['b'] }, { name: 'b', sequence: 'x', depends_on: ['a'] }] });
    const r = await runVigil(project, ['sequence', 'loop']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/layers.depends_on: dependency cycle (a → b → a|b → a → b)/);
  });
});
