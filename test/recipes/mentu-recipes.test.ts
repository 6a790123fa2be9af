import { execFileSync } from 'node:child_process';
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
    for (const field of ['providers.anthropic.api_key_env: ignored', 'steps[0] ("make").max_output_tokens: ignored', 'steps[0] ("make").expected_changes: ignored'])
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

// Issue 45 point 6: the fields of mentu's recipes that stopped on the schema.
describe('more recipes written for mentu: warned or mapped, never refused on the schema', () => {
  it('reasoning is effort; cloud and expected_changes are warnings naming the field', async () => {
    project = makeProject({ codex: true });
    project.recipe({
      name: 'reasoned',
      cloud: { provider: 'mentu-cloud', region: 'eu' },
      reasoning: 'minimal',
      steps: [
        { label: 'deep', backend: 'codex', prompt: 'Think hard', reasoning: 'xhigh', verify: { commands: ['true'] }, expected_changes: ['src'] },
        { label: 'light', backend: 'codex', prompt: 'Think less' },
      ],
    });
    const check = await runVigil(project, ['recipe', 'check', 'reasoned']);
    expect(check.stdout).toMatch(/schema\s+warning\s+valid; 2 fields/);
    const r = await runVigil(project, ['sequence', 'reasoned']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stderr).toContain('cloud: ignored');
    expect(r.stderr).toContain('steps[0] ("deep").expected_changes: ignored');
    const argvOf = (step: string) => (project.logEntries().find((e) => e.agent === 'codex' && e.step === step)!.argv as string[]).join(' ');
    expect(argvOf('deep')).toContain('model_reasoning_effort="high"'); // xhigh is max, which codex spells high
    expect(argvOf('light')).toContain('model_reasoning_effort="low"'); // the recipe's reasoning: minimal
  });

  it("top-level providers serve that recipe's steps as vigil.yml's do: its own custom provider, and mentu's cli entry for claude", async () => {
    project = makeProject();
    project.recipe({
      name: 'own-providers',
      providers: { mine: { type: 'custom', command: project.agent }, sonnet: { api: 'cli', command: 'claude', model: 'x' } },
      steps: [
        { label: 'custom', backend: 'mine', prompt: 'SAY DONE' },
        { label: 'aliased', backend: 'sonnet', prompt: 'Review' },
      ],
    });
    const plan = await runVigil(project, ['sequence', 'own-providers', '--dry-run']);
    expect(plan.stdout).toMatch(/custom\s+backend mine/);
    expect(plan.stdout).toMatch(/aliased\s+backend claude/);
    const r = await runVigil(project, ['sequence', 'own-providers']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(project.logEntries().some((e) => e.agent === 'custom' && e.step === 'custom')).toBe(true);
    expect(project.logEntries().some((e) => e.agent === 'claude' && e.step === 'aliased')).toBe(true);
    project.recipe({ name: 'other', steps: [{ label: 'a', backend: 'mine', prompt: 'SAY DONE' }] });
    const other = await runVigil(project, ['sequence', 'other']);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('unknown backend "mine"');
  });

  it('api "cli" for an agent with no backend here is refused by check and sequence alike, saying what to configure; vigil.yml can configure it', async () => {
    project = makeProject();
    project.recipe({ name: 'gem', providers: { gemini: { api: 'cli', command: 'gemini' } }, steps: [{ label: 'a', backend: 'gemini', prompt: 'SAY DONE' }] });
    const check = await runVigil(project, ['recipe', 'check', 'gem']);
    expect(check.code).toBe(2);
    expect(check.stdout).toMatch(/start\s+REFUSED\s+step "a": no backend "gemini": providers\.gemini: api "cli" runs gemini, an agent CLI Vigil has no backend for; configure it as a custom provider/);
    const r = await runVigil(project, ['sequence', 'gem']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('{type: custom, command: <a program that reads the prompt on stdin and prints the answer>}');
    expect(existsSync(join(project.root, '.vigil', 'runs'))).toBe(false);
    project.yml(`providers:\n  gemini:\n    type: custom\n    command: ${project.agent}\n`);
    expect((await runVigil(project, ['recipe', 'check', 'gem'])).code).toBe(0);
    const ran = await runVigil(project, ['sequence', 'gem']);
    expect(ran.code, ran.stderr).toBe(0);
  });

  it('recipe list keeps warnings and schema messages out of its table: a count, and where to look', async () => {
    project = makeProject();
    project.recipe({ name: 'warned', cloud: true, backend: 'shell', steps: [{ label: 'a', prompt: 'true', reasoning: 'high' }] });
    project.recipe({ name: 'bad', steps: [{ label: 'a', prompt: 'x', bogus: 1, other: 2 }] });
    const r = await runVigil(project, ['recipe', 'list']);
    expect(r.stdout).toMatch(/^warned\s+sequence/m);
    expect(r.stdout).not.toContain('ignored');
    expect(r.stdout).not.toContain('bogus');
    expect(r.stderr).toContain('1 with warnings (fields with no equivalent here): warned (1); see "vigil recipe check <name>"');
    expect(r.stderr).toContain(`invalid recipe ${join(project.root, '.vigil/recipes/bad.json')}: 2 problems; see "vigil recipe check bad"`);
    expect(r.stderr).not.toContain('bogus');
    const check = await runVigil(project, ['recipe', 'check', 'bad']);
    expect(check.stdout).toContain('unknown field "bogus"');
  });
});

describe('verify.git_clean_outside', () => {
  it('fails a step that changed the git tree outside its paths, naming the files; a step that kept to them succeeds', async () => {
    project = makeProject();
    project.file('.gitignore', '.home/\n.bin/\n.fakes/\n');
    project.file('src/a.txt', 'a\n');
    project.file('other.txt', 'o\n');
    for (const args of [['init', '-q', '-b', 'main'], ['add', '-A'], ['-c', 'user.email=t@x', '-c', 'user.name=t', 'commit', '-q', '-m', 'init']])
      execFileSync('git', args, { cwd: project.root, stdio: 'ignore' });
    project.recipe({
      name: 'kept',
      backend: 'shell',
      steps: [
        { label: 'inside', prompt: 'echo changed > src/a.txt\necho new > src/b.txt', verify: { git_clean_outside: ['src/'] } },
        { label: 'by-expected', prompt: 'echo again > src/a.txt', expected_changes: ['src'], verify: { git_clean_outside: true } },
      ],
    });
    const ok = await runVigil(project, ['sequence', 'kept']);
    expect(ok.code, ok.stderr + ok.stdout).toBe(0);
    project.recipe({ name: 'strays', backend: 'shell', steps: [{ label: 'stray', prompt: 'echo changed > other.txt\necho x > src/c.txt', verify: { git_clean_outside: 'src' } }] });
    const bad = await runVigil(project, ['sequence', 'strays']);
    expect(bad.code).toBe(1);
    expect(stepOf(lastRun(project), 'stray').reason).toBe('verify.git_clean_outside (src): it changed other.txt');
  });
});
