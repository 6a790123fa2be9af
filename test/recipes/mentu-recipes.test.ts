import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lastRun, makeProject, type Project, runVigil, stepOf } from './helpers.ts';

let project: Project;
afterEach(() => project?.cleanup());

describe('recipes written for mentu run unchanged', () => {
  it('maps top-level backend and model, the shell backend, max_retries, verify.commands and allowed_tools; warns naming fields with no equivalent', async () => {
    project = makeProject();
    project.recipe({
      name: 'mentu-style',
      backend: 'shell',
      model: 'some-model',
      providers: { anthropic: { api_key_env: 'ANTHROPIC_API_KEY' } },
      steps: [
        {
          label: 'make',
          prompt: 'echo built > out.txt\necho made it',
          max_retries: 2,
          max_output_tokens: 4000,
          expected_changes: ['out.txt'],
          verify: { commands: ['test -f out.txt', 'grep -q built out.txt'] },
        },
        { label: 'review', backend: 'claude', prompt: 'Review out.txt', allowed_tools: ['Read', 'Bash'] },
      ],
    });
    const r = await runVigil(project, ['sequence', 'mentu-style']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(readFileSync(join(project.root, 'out.txt'), 'utf8')).toBe('built\n');
    for (const field of ['providers: ignored', 'steps[0] ("make").max_output_tokens: ignored', 'steps[0] ("make").expected_changes: ignored'])
      expect(r.stderr).toContain(field);
    const run = lastRun(project);
    expect(stepOf(run, 'make').status).toBe('succeeded');
    expect(stepOf(run, 'make').backend).toBe('shell');
    expect(stepOf(run, 'make').attempts).toBe(1);
    const review = project.logEntries().find((c) => c.step === 'review')!;
    const argv = review.argv as string[];
    expect(argv[argv.indexOf('--allowedTools') + 1]).toBe('Read,Bash');
    expect(argv[argv.indexOf('--model') + 1]).toBe('some-model');
    expect(review.prompt).toBe('Review out.txt');
  });

  it('verify.commands is a build check: a failing command fails the step after its retries', async () => {
    project = makeProject();
    project.recipe({
      name: 'verify-fails',
      backend: 'shell',
      steps: [{ label: 'make', prompt: 'echo try >> tries.txt', max_retries: 1, verify: { commands: ['test -f never-made.txt'] } }],
    });
    const r = await runVigil(project, ['sequence', 'verify-fails']);
    expect(r.code).toBe(1);
    const step = stepOf(lastRun(project), 'make');
    expect(step.status).toBe('failed');
    expect(step.attempts).toBe(2);
    expect(readFileSync(join(project.root, 'tries.txt'), 'utf8')).toBe('try\ntry\n');
  });

  it('reads a shell prompt as a script for the destructive-intent check', async () => {
    project = makeProject();
    project.recipe({ name: 'wipe', backend: 'shell', steps: [{ label: 'x', prompt: 'rm -rf / --no-preserve-root' }] });
    const r = await runVigil(project, ['sequence', 'wipe']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('destructive intents found');
    expect(existsSync(join(project.root, '.vigil', 'runs'))).toBe(false);
  });
});
