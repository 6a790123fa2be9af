import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShProject } from './composite-helpers.ts';
import { lastRun, type Project, runVigil, stepOf } from './helpers.ts';

let project: Project;
afterEach(() => project?.cleanup());

describe('retry, if:, continue_on_error and cleanup steps', () => {
  it('retries a failing step until it succeeds, recording the attempts', async () => {
    project = makeShProject({ git: false });
    project.recipe({
      name: 'flaky',
      canary: false,
      steps: [
        // Fails twice (counting in a file), then succeeds.
        { label: 'flaky', args: ['n=$$(cat count 2>/dev/null || echo 0); echo $$((n+1)) > count; [ $$n -ge 2 ] && echo third-time-lucky'], retry: { attempts: 3, backoff_s: 0 } },
        { label: 'once', args: ['exit 1'], retry: { attempts: 2 }, depends_on: [] },
      ],
    });
    const r = await runVigil(project, ['sequence', 'flaky']);
    expect(r.code, r.stderr).toBe(1);
    const run = lastRun(project);
    expect(stepOf(run, 'flaky').status).toBe('succeeded');
    expect(stepOf(run, 'flaky').attempts).toBe(3);
    expect(stepOf(run, 'once').status).toBe('failed');
    expect(stepOf(run, 'once').attempts).toBe(2);
    expect(r.stdout + r.stderr).toContain('attempt 1 of 3 failed');
  });

  it('steps.<label>.output of a retried step is its last attempt\'s output; the log keeps every attempt', async () => {
    project = makeShProject({ git: false });
    project.recipe({
      name: 'retry-output',
      canary: false,
      steps: [
        // Fails once saying so, then succeeds.
        { label: 'flaky', args: ['n=$$(cat count 2>/dev/null || echo 0); echo $$((n+1)) > count; echo "attempt-$$n-said-this"; [ $$n -ge 1 ]'], retry: { attempts: 2, backoff_s: 0 } },
        // biome-ignore lint/suspicious/noTemplateCurlyInString: vigil's own step reference, rendered by the runner
        { label: 'reader', args: ['cat > seen.txt <<\'EOF\'\n${steps.flaky.output}\nEOF'], depends_on: ['flaky'] },
      ],
    });
    const r = await runVigil(project, ['sequence', 'retry-output']);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(project.root, 'seen.txt'), 'utf8').trim()).toBe('attempt-1-said-this');
    const run = lastRun(project);
    expect(stepOf(run, 'flaky').attempts).toBe(2);
    const log = stepOf(run, 'flaky').output ?? readFileSync(join(project.root, '.vigil', 'runs', run.id, stepOf(run, 'flaky').output_file!), 'utf8');
    expect(log).toContain('attempt-0-said-this');
    expect(log).toContain('--- attempt 2 of 2 ---');
  });

  it('skips a step whose if: is false without skipping the steps after it, and reads earlier outputs and statuses', async () => {
    project = makeShProject({ git: false });
    project.recipe({
      name: 'cond',
      canary: false,
      env: { TARGET: 'staging' },
      steps: [
        { label: 'probe', args: ['echo "verdict: ready"'] },
        { label: 'prod-only', args: ['touch prod-ran'], if: "vars.TARGET == 'production'" },
        { label: 'when-ready', args: ['touch ready-ran'], if: "contains(steps.probe.output, 'ready') && steps.probe.status == 'succeeded'" },
        // biome-ignore lint/suspicious/noTemplateCurlyInString: GitHub Actions' own syntax, not a template
        { label: 'gha-style', args: ['touch gha-ran'], if: "${{ vars.TARGET != 'production' && !contains(vars.TARGET, 'prod') }}" },
        { label: 'last', args: ['touch last-ran'] },
      ],
    });
    const r = await runVigil(project, ['sequence', 'cond']);
    expect(r.code, r.stderr).toBe(0);
    const run = lastRun(project);
    expect(run.status).toBe('succeeded');
    expect(stepOf(run, 'prod-only').status).toBe('skipped');
    expect(stepOf(run, 'prod-only').reason).toContain("vars.TARGET == 'production'");
    expect(existsSync(join(project.root, 'prod-ran'))).toBe(false);
    for (const f of ['ready-ran', 'gha-ran', 'last-ran']) expect(existsSync(join(project.root, f)), f).toBe(true);
  });

  it('continue_on_error lets dependents run; an if: failure() / always() cleanup runs after a failure, the run still fails', async () => {
    project = makeShProject({ git: false });
    project.recipe({
      name: 'cleanup',
      canary: false,
      steps: [
        { label: 'lint', args: ['echo lint problems; exit 3'], continue_on_error: true },
        { label: 'build', args: ['touch built; exit 1'] },
        { label: 'deploy', args: ['touch deployed'] },
        { label: 'on-failure', args: ['touch notified'], if: 'failure()' },
        { label: 'cleanup', args: ['rm -f built; touch cleaned'], if: 'always()' },
        { label: 'on-success', args: ['touch celebrated'], if: 'success()' },
      ],
    });
    const r = await runVigil(project, ['sequence', 'cleanup']);
    expect(r.code).toBe(1);
    const run = lastRun(project);
    expect(run.status).toBe('failed');
    expect(stepOf(run, 'lint').status).toBe('failed');
    expect(stepOf(run, 'lint').continued).toBe(true);
    expect(stepOf(run, 'build').status).toBe('failed');
    expect(stepOf(run, 'deploy').status).toBe('skipped');
    expect(stepOf(run, 'on-failure').status).toBe('succeeded');
    expect(stepOf(run, 'cleanup').status).toBe('succeeded');
    expect(stepOf(run, 'on-success').status).toBe('skipped');
    expect(existsSync(join(project.root, 'deployed'))).toBe(false);
    expect(existsSync(join(project.root, 'built'))).toBe(false);
    expect(existsSync(join(project.root, 'cleaned'))).toBe(true);
    expect(existsSync(join(project.root, 'notified'))).toBe(true);
    expect(existsSync(join(project.root, 'celebrated'))).toBe(false);
  });

  it('a failure with only continue_on_error steps failing ends the run succeeded', async () => {
    project = makeShProject({ git: false });
    project.recipe({
      name: 'soft',
      canary: false,
      steps: [
        { label: 'optional', args: ['exit 2'], continue_on_error: true },
        { label: 'main', args: ['touch main-ran'] },
      ],
    });
    const r = await runVigil(project, ['sequence', 'soft']);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(project.root, 'main-ran'))).toBe(true);
  });

  it('refuses a condition it cannot read, naming the step, the field and what is allowed', async () => {
    project = makeShProject({ git: false });
    project.recipe({
      name: 'badcond',
      canary: false,
      steps: [
        { label: 'a', args: ['true'] },
        { label: 'b', args: ['true'], if: 'process.exit(1)' },
        { label: 'c', args: ['true'], if: "steps.nope.status == 'succeeded'" },
        { label: 'd', args: ['true'], if: "vars.X == 'y' &&" },
      ],
    });
    const r = await runVigil(project, ['sequence', 'badcond']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('steps[1] ("b").if: unknown name "process"');
    expect(r.stderr).toContain('steps[2] ("c").if: unknown step "nope"');
    expect(r.stderr).toContain('steps[3] ("d").if:');
    expect(existsSync(join(project.root, '.vigil', 'runs'))).toBe(false);
  });
});
