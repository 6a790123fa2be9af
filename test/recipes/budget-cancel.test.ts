// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${NAME} in these strings is vigil's own variable syntax, substituted by the runner
// Budgets (usage from the agents, limits on recipes and steps, over_budget,
// usage.limit_reached) and cancellation of a composite run tree: every
// agent's process group is killed and no record is left running.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { childRuns, makeShProject, rootRun, shRecipe } from './composite-helpers.ts';
import { isAlive, type Project, runsOf, runVigil, startVigil } from './helpers.ts';
import { untilTrue } from '../support/until.ts';

// Each test runs many real processes (a loaded machine makes that slow).
vi.setConfig({ testTimeout: 180_000 });

let project: Project;
afterEach(() => project?.cleanup());

// Prints usage every 100 ms and records its pid (children run in worktrees: the pid goes to the project root); never finishes on its own.
const SPENDER = 'echo $$$$ > ${ROOT}/pid-${PARALLEL_INDEX}.txt; while true; do echo \'USAGE {"input_tokens":400,"output_tokens":100,"usd":0.05}\'; sleep 0.1; done';

describe('budgets', () => {
  it('stops a parallel run whose children together reach the recipe budget: over_budget, exit 1, usage recorded, event emitted', async () => {
    project = makeShProject();
    shRecipe(project, 'spend', SPENDER, { env: { ROOT: project.root } });
    project.recipe({ name: 'costly', type: 'parallel', recipe: 'spend', budget: { usd: 0.5 }, vars: [{ A: '1' }, { A: '2' }] });
    const r = await runVigil(project, ['sequence', 'costly']);
    expect(r.code).toBe(1);
    const run = rootRun(project);
    expect(run.status).toBe('over_budget');
    expect(run.usage!.usd).toBeGreaterThanOrEqual(0.5);
    expect(run.usage!.input_tokens).toBeGreaterThan(0);
    for (const child of childRuns(project, run)) {
      expect(child.status).toBe('over_budget');
      expect(child.steps[0]!.killed_by).toBe('budget');
      expect(child.steps[0]!.usage!.usd).toBeGreaterThan(0);
    }
    for (const i of ['0', '1']) expect(isAlive(Number(readFileSync(join(project.root, `pid-${i}.txt`), 'utf8')))).toBe(false);
    const events = readFileSync(join(project.root, '.vigil', 'runs', run.id, 'events.jsonl'), 'utf8');
    expect(events).toContain('"type":"usage.limit_reached"');
    expect(r.stdout).toMatch(/budget reached: run \S+ \("costly"\) used \$0\.5\d* of \$0\.5 \(usd\)/);
  });

  it("a pipeline entry not started because the run's budget was reached says so, not 'the run was cancelled'", async () => {
    project = makeShProject({ git: false });
    shRecipe(project, 'spend', SPENDER, { env: { ROOT: project.root, PARALLEL_INDEX: 'p' } });
    project.recipe({ name: 'pipe', type: 'pipeline', budget: { usd: 0.2 }, sequences: [{ name: 'spend' }, { name: 'spend' }] });
    const r = await runVigil(project, ['sequence', 'pipe']);
    expect(r.code).toBe(1);
    const run = rootRun(project);
    expect(run.status).toBe('over_budget');
    expect(run.children![1]).toMatchObject({
      status: 'cancelled',
      reason: expect.stringMatching(/^not started: budget reached: run \S+ \("pipe"\) used \$0\.2\d* of \$0\.2 \(usd\)$/),
    });
    expect(childRuns(project, run)).toHaveLength(1);
    // The entry that was running ends over its budget, saying which (not "cancelled by a signal").
    expect(childRuns(project, run)[0]).toMatchObject({ status: 'over_budget', reason: expect.stringMatching(/^budget reached: run \S+ \("pipe"\)/) });
  });

  it('prices tokens from vigil.yml when the agent reports no cost, and enforces a step token budget', async () => {
    project = makeShProject({ git: false });
    project.yml(
      `${readFileSync(join(project.root, 'vigil.yml'), 'utf8')}prices:\n  tiny-1: { input_per_mtok: 1000, output_per_mtok: 2000 }\n`,
    );
    shRecipe(project, 'tokens', 'echo \'USAGE {"input_tokens":300,"output_tokens":200}\'; sleep 0.3; echo \'USAGE {"input_tokens":300,"output_tokens":200}\'; sleep 30', {}, { model: 'tiny-1', budget: { tokens: 800 } });
    const r = await runVigil(project, ['sequence', 'tokens']);
    expect(r.code).toBe(1);
    const run = rootRun(project);
    expect(run.status).toBe('over_budget');
    expect(run.steps[0]).toMatchObject({ status: 'killed', killed_by: 'budget' });
    expect(run.steps[0]!.reason).toContain('used 1000 tokens of 800 tokens (tokens)');
    // 600 input tokens at $1000/M and 400 output at $2000/M.
    expect(run.usage).toMatchObject({ input_tokens: 600, output_tokens: 400, usd: 1.4 });
    expect(run.usage!.by_step.work).toMatchObject({ usd: 1.4 });
    // The event tells the run's usage with the report that reached the step's limit, not the one before.
    const events = readFileSync(join(project.root, '.vigil', 'runs', run.id, 'events.jsonl'), 'utf8').trim().split('\n');
    const reached = events.map((l) => JSON.parse(l) as { type: string; usage?: unknown }).find((e) => e.type === 'usage.limit_reached');
    expect(reached).toMatchObject({ step: 'work', limit: 'tokens', used: 1000, usage: { input_tokens: 600, output_tokens: 400, usd: 1.4 } });
  });

  it('a minutes budget ends the run over_budget', async () => {
    project = makeShProject({ git: false });
    shRecipe(project, 'slow', 'sleep 30', { budget: { minutes: 0.02 } });
    const r = await runVigil(project, ['sequence', 'slow']);
    expect(r.code).toBe(1);
    expect(rootRun(project).status).toBe('over_budget');
    expect(rootRun(project).reason).toContain('(minutes)');
  });
});

describe('cancelling a composite run', () => {
  for (const [signal, exit] of [
    ['SIGINT', 130],
    ['SIGHUP', 143],
  ] as const) {
    it(`${signal} kills every child's agent group and leaves no record running (exit ${exit})`, async () => {
      project = makeShProject();
      shRecipe(project, 'hang', 'echo $$$$ > ${ROOT}/pid-${PARALLEL_INDEX}.txt; sleep 60 & wait', { env: { ROOT: project.root } });
      project.recipe({ name: 'wide', type: 'parallel', recipe: 'hang', fanout: 3, vars: [{ A: '0' }, { A: '1' }, { A: '2' }, { A: '3' }] });
      const run = startVigil(project, ['sequence', 'wide']);
      const pidFiles = [0, 1, 2].map((i) => join(project.root, `pid-${i}.txt`));
      await untilTrue('three children to start', () => pidFiles.every((f) => existsSync(f) && readFileSync(f, 'utf8').trim() !== ''));
      const pids = pidFiles.map((f) => Number(readFileSync(f, 'utf8')));
      run.child.kill(signal);
      const result = await run.done;
      expect(result.code).toBe(exit);
      for (const pid of pids) expect(isAlive(pid)).toBe(false);
      const records = runsOf(project);
      expect(records.filter((r) => r.status === 'running')).toEqual([]);
      const root = rootRun(project);
      expect(root.status).toBe('cancelled');
      expect(root.children!.map((c) => c.status)).toEqual(['cancelled', 'cancelled', 'cancelled', 'cancelled']);
      // The fourth never started, and says what stopped it.
      expect(root.children![3]!.reason).toBe(`not started: the run was cancelled by ${signal}`);
      // The run and the agents it stopped say what stopped them.
      expect(root.reason).toBe(`the run was cancelled by ${signal}`);
      for (const child of childRuns(project, root)) expect(child.steps[0]).toMatchObject({ status: 'cancelled', reason: `the run was cancelled by ${signal}` });
      const listed = await runVigil(project, ['runs', root.id]);
      expect(listed.stdout).toContain(`run ${root.id}  parallel "wide"  cancelled`);
    });
  }
});

describe('--json', () => {
  it('prints every event of every run of the tree as one JSON object per line', async () => {
    project = makeShProject({ git: false });
    shRecipe(project, 'one', 'echo hi');
    project.recipe({ name: 'p', type: 'pipeline', sequences: [{ name: 'one' }, { name: 'one' }] });
    const r = await runVigil(project, ['sequence', 'p', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const events = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; run: string });
    const root = rootRun(project);
    expect(events[0]).toMatchObject({ type: 'run.started', run: root.id });
    expect(events.filter((e) => e.type === 'run.started')).toHaveLength(3);
    expect(events.filter((e) => e.type === 'step.changed').length).toBeGreaterThanOrEqual(4);
    expect(events.at(-1)).toMatchObject({ type: 'run.ended', run: root.id, status: 'succeeded' });
  });
});

describe('usage from the agent CLIs', () => {
  it("counts Claude Code's result event (total_cost_usd, usage) and ends the run over_budget at the recipe's usd", async () => {
    project = makeShProject({ git: false });
    project.recipe({
      name: 'claude-costs',
      canary: false,
      budget: { usd: 0.25 },
      env: { FAKE_COST: '0.125' },
      steps: ['a', 'b', 'c'].map((label) => ({ label, args: ['TURNS=2'], backend: 'claude' })),
    });
    const r = await runVigil(project, ['sequence', 'claude-costs']);
    expect(r.code).toBe(1);
    const run = rootRun(project);
    expect(run.status).toBe('over_budget');
    expect(run.usage).toMatchObject({ usd: 0.25, input_tokens: 40, output_tokens: 20 });
    // No prices entry for its model: the user is told, at its first message, that the cap is checked only at its end.
    expect(r.stdout.match(/step "a": its agent reports its cost only when it ends, and vigil.yml has no prices entry for model "claude-fake-1"/g)).toHaveLength(1);
    expect(r.stdout).not.toMatch(/step "b": its agent reports its cost only when it ends/);
    // Step c never started: it says the budget stopped the run, not that someone cancelled it.
    expect(run.steps.find((s) => s.label === 'c')).toMatchObject({ status: 'cancelled', reason: expect.stringMatching(/^not started: budget reached: run \S+ \("claude-costs"\) used \$0\.25 of \$0\.25 \(usd\)$/) });
  });

  it("counts Codex's turn.completed usage against a step's token budget", async () => {
    project = makeShProject({ git: false, codex: true });
    // Its turns take time, as a real agent's do (half a second each, and more of them than the kill
    // needs): six turns written at once let a loaded machine see the agent finish before the budget's
    // kill landed, which by design stands (run-step.ts), and the step succeeded.
    project.recipe({ name: 'codex-tokens', canary: false, steps: [{ label: 'a', args: ['ROUNDS=40 SLEEP_MS=20000'], backend: 'codex', max_phases: 50, budget: { tokens: 4 } }] });
    const r = await runVigil(project, ['sequence', 'codex-tokens']);
    expect(r.code).toBe(1);
    const run = rootRun(project);
    expect(run.steps[0]).toMatchObject({ status: 'killed', killed_by: 'budget' });
    expect(run.usage!.input_tokens + run.usage!.output_tokens).toBeGreaterThanOrEqual(4);
  });
});
