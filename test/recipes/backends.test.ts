import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeModelServer, startFakeModelServer } from '../fakes/fake-openai-server.ts';
import { until } from '../support/until.ts';
import { customProvider, lastRun, makeProject, type Project, runsOf, runVigil, startVigil, stepOf } from './helpers.ts';

let project: Project;
afterEach(() => project?.cleanup());

function vault(entries: Record<string, string>): void {
  mkdirSync(join(project.home, '.vigil'), { recursive: true });
  writeFileSync(join(project.home, '.vigil', 'vault.json'), JSON.stringify({ 'vigil-vault/default': entries }));
}

describe('claude backend', () => {
  it('maps model, effort, permission_mode and max_phases to Claude Code and passes the rendered prompt on stdin', async () => {
    project = makeProject();
    project.file('prompts/fix.md', 'Fix $AREA. TURNS=2 SAY=SHIPPED\n');
    project.recipe({
      name: 'fix',
      canary: false,
      env: { AREA: 'the parser' },
      steps: [
        {
          label: 'fix',
          args: ['-p', 'prompts/fix.md'],
          model: 'claude-sonnet-4-5',
          effort: 'high',
          permission_mode: 'bypassPermissions',
          max_phases: 3,
          completion_keyword: 'SHIPPED',
          dir: 'pkg',
        },
      ],
    });
    const r = await runVigil(project, ['sequence', 'fix']);
    expect(r.code, r.stderr).toBe(0);
    const call = project.logEntries().find((e) => e.step === 'fix')!;
    const argv = call.argv as string[];
    expect(argv.slice(0, 4)).toEqual(['-p', '--output-format', 'stream-json', '--verbose']);
    // claude 2.1's --help lists no turn limit: vigil counts the turns itself.
    expect(argv.slice(4)).toEqual(['--model', 'claude-sonnet-4-5', '--permission-mode', 'bypassPermissions']);
    expect(call.thinking).toBe('31999');
    expect(call.prompt).toBe('Fix the parser. TURNS=2 SAY=SHIPPED\n');
    expect(call.cwd).toBe(join(project.root, 'pkg'));
    const step = stepOf(lastRun(project), 'fix');
    expect(step.phases).toBe(2);
    expect(step.prompt_files).toEqual(['prompts/fix-1.md']);
  });

  it('fails a step that reaches max_phases, and one that ends without its completion keyword', async () => {
    project = makeProject();
    project.recipe({
      name: 'limits',
      canary: false,
      steps: [
        { label: 'long', args: ['TURNS=5'], max_phases: 2, depends_on: [] },
        { label: 'mute', args: ['TURNS=1'], completion_keyword: 'FINISHED', depends_on: [] },
      ],
    });
    const r = await runVigil(project, ['sequence', 'limits']);
    expect(r.code).toBe(1);
    const run = lastRun(project);
    expect(stepOf(run, 'long')).toMatchObject({ status: 'killed', killed_by: 'max_phases', reason: 'max_phases (2) reached before the agent finished' });
    expect(stepOf(run, 'mute').reason).toBe('the agent finished without the completion keyword "FINISHED"');
  });

  it('passes the credentials of the step\'s auth profile, read from the vault', async () => {
    project = makeProject();
    vault({ team_token: 'tok-123' });
    project.yml('auth:\n  team:\n    env:\n      FAKE_AUTH_TOKEN: vault:team_token\n');
    project.recipe({ name: 'authed', canary: false, steps: [{ label: 'a', args: ['x'], auth: 'team' }] });
    const r = await runVigil(project, ['sequence', 'authed']);
    expect(r.code, r.stderr).toBe(0);
    expect(project.logEntries().find((e) => e.step === 'a')!.auth).toBe('tok-123');
  });
});

describe('codex backend', () => {
  it('runs codex exec with JSON output and the flags of codex-cli 0.171, the prompt on stdin, and counts actions as phases', async () => {
    project = makeProject({ claude: false, codex: true });
    project.recipe({
      name: 'cx',
      steps: [
        { label: 'ok', args: ['TURNS=3 SAY=FIN'], model: 'gpt-5-codex', effort: 'high', permission_mode: 'acceptEdits', completion_keyword: 'FIN', depends_on: [] },
        { label: 'turns', args: ['TURNS=3'], max_phases: 2, depends_on: [] },
        { label: 'long', args: ['TURNS=4'], max_phases: 2, depends_on: [] },
        { label: 'flaky', args: ['TRANSIENT ROUNDS=2'], depends_on: [] },
      ],
    });
    const r = await runVigil(project, ['sequence', 'cx']);
    expect(r.code).toBe(1);
    const call = project.logEntries().find((e) => e.step === 'ok')!;
    expect(call.argv).toEqual(['exec', '--json', '--skip-git-repo-check', '--model', 'gpt-5-codex', '-c', 'model_reasoning_effort="high"', '--sandbox', 'workspace-write', '-']);
    expect(call.prompt).toBe('TURNS=3 SAY=FIN');
    const run = lastRun(project);
    // codex exec runs one turn: its two commands are its phases.
    expect(stepOf(run, 'ok')).toMatchObject({ status: 'succeeded', phases: 2, backend: 'codex' });
    expect(stepOf(run, 'turns')).toMatchObject({ status: 'succeeded', phases: 2 });
    // A third command is past max_phases 2.
    expect(stepOf(run, 'long')).toMatchObject({ status: 'killed', killed_by: 'max_phases', phases: 2, reason: 'max_phases (2) reached before the agent finished' });
    // One transient error event (a retried stream) does not fail the step; a reply without commands is one phase.
    expect(stepOf(run, 'flaky')).toMatchObject({ status: 'succeeded', phases: 1 });
  });

  it('says why codex exited: its error, not the warning it printed first', async () => {
    project = makeProject({ claude: false, codex: true });
    project.recipe({ name: 'np', canary: false, steps: [{ label: 'a', args: ['NO_PROMPT'] }] });
    const r = await runVigil(project, ['sequence', 'np']);
    expect(r.code).toBe(1);
    expect(stepOf(lastRun(project), 'a').reason).toBe('codex exited with code 1: No prompt provided via stdin.');
  });

  it('refuses a flag codex exec does not have before anything runs, naming it', async () => {
    project = makeProject({ claude: false, codex: true });
    const file = project.recipe({ name: 'old', canary: false, steps: [{ label: 'a', args: ['--full-auto', '--allowedTools', 'Bash', 'hello there'] }] });
    const r = await runVigil(project, ['sequence', 'old']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file}: step "a".args: --full-auto: codex exec has no --full-auto; see \`codex exec --help\``);
    expect(r.stderr).toContain("--allowedTools: codex exec has no --allowedTools (it is claude's flag)");
    expect(project.logEntries()).toEqual([]);
  });
});

describe('custom backend', () => {
  it("vigil runs <id> shows a running step's phase so far, not the 0 of phases counted at its end", async () => {
    project = makeProject();
    customProvider(project);
    project.file('prompts/slow.md', 'SLEEP_MS=150\n');
    project.recipe({ name: 'slow', canary: false, steps: [{ label: 'work', backend: 'fake', args: ['prompts/slow.md'], completion_keyword: 'NEVER', max_phases: 1000 }] });
    const runner = startVigil(project, ['sequence', 'slow']);
    try {
      const run = await until('the step in its third phase', () => {
        const r = runsOf(project).at(-1);
        return r && stepOf(r, 'work').phase >= 3 ? r : undefined;
      });
      const shown = await runVigil(project, ['runs', run.id]);
      const line = shown.stdout.split('\n').find((l) => l.trimStart().startsWith('work '));
      expect(line, shown.stdout).toMatch(/ running +phase \d+/);
      expect(Number(/phase (\d+)/.exec(line!)![1])).toBeGreaterThanOrEqual(3);
    } finally {
      runner.child.kill('SIGINT');
      await runner.done;
    }
    expect(stepOf(lastRun(project), 'work')).toMatchObject({ status: 'cancelled' });
    expect((await runVigil(project, ['runs', lastRun(project).id])).stdout).toMatch(/work +cancelled +phases \d+/);
  });

  it('runs the program once per phase until it prints the completion keyword, with the prompt file replaced by the rendered prompt', async () => {
    project = makeProject();
    customProvider(project);
    project.file('prompts/loop.md', 'Hello $NAME. DONE_AT=3 SAY=READY\n');
    project.recipe({
      name: 'loop',
      canary: false,
      env: { GREETING: 'hello from the recipe' },
      steps: [
        {
          label: 'loop',
          backend: 'fake',
          args: ['--task', 'prompts/loop.md'],
          completion_keyword: 'READY',
          max_phases: 5,
          model: 'local-model',
          // biome-ignore lint/suspicious/noTemplateCurlyInString: a ${NAME} reference for vigil to substitute
          env: { STEP_ONLY: 'for ${NAME}' },
        },
      ],
    });
    const r = await runVigil(project, ['sequence', 'loop', '--var', 'NAME=Ada']);
    expect(r.code, r.stderr).toBe(0);
    const calls = project.logEntries().filter((e) => e.step === 'loop' && e.canary === null);
    expect(calls.map((c) => c.phase)).toEqual([1, 2, 3]);
    const run = lastRun(project);
    const rendered = join(project.root, '.vigil', 'runs', run.id, 'prompts', 'loop-1.md');
    expect(calls[0]!.argv).toEqual(['--task', rendered]);
    expect(readFileSync(rendered, 'utf8')).toBe('Hello Ada. DONE_AT=3 SAY=READY\n');
    expect(calls[0]!.prompt).toBe('Hello Ada. DONE_AT=3 SAY=READY\n');
    // The recipe env and the step env (with variables substituted) reach the agent's environment.
    expect(calls[0]!.env).toEqual({ GREETING: 'hello from the recipe', STEP_ONLY: 'for Ada' });
    expect(calls[0]!.settings).toEqual({ model: 'local-model', keyword: 'READY' });
    expect(stepOf(run, 'loop').phases).toBe(3);
  });

  it('fails when max_phases is reached without the keyword', async () => {
    project = makeProject();
    customProvider(project);
    project.recipe({ name: 'never', canary: false, steps: [{ label: 'n', backend: 'fake', args: ['SAY=READY DONE_AT=9'], completion_keyword: 'READY', max_phases: 2 }] });
    const r = await runVigil(project, ['sequence', 'never']);
    expect(r.code).toBe(1);
    expect(stepOf(lastRun(project), 'n').reason).toBe('max_phases (2) reached without the completion keyword "READY"');
    expect(project.logEntries().filter((e) => e.step === 'n' && e.canary === null)).toHaveLength(2);
  });

  it('reads its USAGE lines and completion keyword after megabytes printed without a line end, and logs every byte', async () => {
    project = makeProject();
    // 3 MB with no line end, then usage, then the keyword in two writes (a word split between two reads).
    const agent = project.file(
      'spew.mjs',
      [
        '#!/usr/bin/env node',
        "process.stdout.write('é'.repeat(1_500_000));",
        'process.stdout.write(\'\\nUSAGE {"input_tokens":7,"output_tokens":3}\\nall DO\');',
        "setTimeout(() => process.stdout.write('NE now\\n'), 50);",
      ].join('\n'),
    );
    chmodSync(agent, 0o755);
    project.yml(`providers:\n  spew:\n    type: custom\n    command: ${agent}\n`);
    project.recipe({ name: 'spew', canary: false, steps: [{ label: 's', backend: 'spew', args: [], completion_keyword: 'DONE', max_phases: 2 }] });
    const r = await runVigil(project, ['sequence', 'spew']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const run = lastRun(project);
    expect(stepOf(run, 's')).toMatchObject({ status: 'succeeded', phases: 1, usage: { input_tokens: 7, output_tokens: 3 } });
    const log = readFileSync(join(project.root, '.vigil', 'runs', run.id, stepOf(run, 's').output_file as string), 'utf8');
    expect(log).toContain(`${'é'.repeat(1_500_000)}\nUSAGE {"input_tokens":7,"output_tokens":3}\nall DONE now\n`);
  });

  it('fails the step when build_command exits non-zero', async () => {
    project = makeProject();
    customProvider(project);
    project.recipe({ name: 'build', canary: false, steps: [{ label: 'b', backend: 'fake', args: ['x'], build_command: 'echo compiling; exit 3' }] });
    const r = await runVigil(project, ['sequence', 'build']);
    expect(r.code).toBe(1);
    const step = stepOf(lastRun(project), 'b');
    expect(step.status).toBe('failed');
    expect(step.reason).toBe('build_command exited with code 3');
  });
});

describe('HTTP providers', () => {
  let server: FakeModelServer;
  beforeAll(async () => {
    server = await startFakeModelServer();
  });
  afterAll(() => server.close());

  it('runs the phase loop over the OpenAI chat completions API, one call per phase, with the vault api key', async () => {
    project = makeProject();
    vault({ openai_key: 'sk-fake' });
    project.yml(`providers:\n  local:\n    type: openai\n    base_url: ${server.url}/v1\n    models: [fake-7b]\n    api_key: vault:openai_key\n`);
    project.recipe({ name: 'chat', steps: [{ label: 'ask', backend: 'local', args: ['Summarise. DONE_AT=2 SAY=OVER'], completion_keyword: 'OVER' }] });
    const before = server.requests.length;
    const r = await runVigil(project, ['sequence', 'chat']);
    expect(r.code, r.stderr).toBe(0);
    const calls = server.requests.slice(before);
    // The canary, then two phases.
    expect(calls).toHaveLength(3);
    expect(calls.every((c) => c.path === '/v1/chat/completions' && c.headers.authorization === 'Bearer sk-fake')).toBe(true);
    expect(calls[2]!.body.model).toBe('fake-7b');
    expect(calls[2]!.body.messages!.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    const run = lastRun(project);
    expect(stepOf(run, 'ask').phases).toBe(2);
    expect(readFileSync(join(project.root, '.vigil', 'runs', run.id, 'steps', 'ask.log'), 'utf8')).toContain('finished. OVER');
  });

  it('speaks the Anthropic messages API', async () => {
    project = makeProject();
    project.yml(`providers:\n  claude-api:\n    type: anthropic\n    base_url: ${server.url}\n    api_key: ak-fake\n`);
    project.recipe({ name: 'msg', canary: false, steps: [{ label: 'ask', backend: 'claude-api', model: 'claude-x', args: ['Hi'] }] });
    const before = server.requests.length;
    const r = await runVigil(project, ['sequence', 'msg']);
    expect(r.code, r.stderr).toBe(0);
    const [call] = server.requests.slice(before);
    expect(call!.path).toBe('/v1/messages');
    expect(call!.headers['x-api-key']).toBe('ak-fake');
    expect(call!.body.model).toBe('claude-x');
  });
});

describe('choosing the backend', () => {
  it('uses the step backend, else --backend, else default_backend, else claude on PATH', async () => {
    project = makeProject();
    customProvider(project);
    project.recipe({
      name: 'choose',
      canary: false,
      steps: [
        { label: 'pinned', args: ['x'], backend: 'claude', depends_on: [] },
        { label: 'free', args: ['x'], depends_on: [] },
      ],
    });
    const byStep = (label: string) => project.logEntries().filter((e) => e.step === label).map((e) => e.agent);
    expect((await runVigil(project, ['sequence', 'choose', '--backend', 'fake'])).code).toBe(0);
    expect(byStep('pinned')).toEqual(['claude']);
    expect(byStep('free')).toEqual(['custom']);

    project.yml(`default_backend: fake\nproviders:\n  fake:\n    type: custom\n    command: ${project.agent}\n`);
    expect((await runVigil(project, ['sequence', 'choose', '--backend', 'claude'])).code).toBe(0);
    expect(byStep('free')).toEqual(['custom', 'claude']);
    expect((await runVigil(project, ['sequence', 'choose'])).code).toBe(0);
    expect(byStep('free')).toEqual(['custom', 'claude', 'custom']);
  });

  it('names the known backends when one is unknown', async () => {
    project = makeProject();
    customProvider(project);
    const file = project.recipe({ name: 'unknown-backend', steps: [{ label: 'a', args: ['x'], backend: 'gpt9' }] });
    const r = await runVigil(project, ['sequence', 'unknown-backend']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file}: step "a": unknown backend "gpt9"; known backends: claude, codex, shell, fake`);
  });
});

describe('variables and outputs', () => {
  it('gives --var priority over the environment, and the environment over the recipe env; VIGIL_ variables are not variables', async () => {
    project = makeProject();
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the prompt uses the ${NAME} form on purpose
    project.file('prompts/v.md', 'a=$A b=${B} c=$C\n');
    project.recipe({ name: 'vars', canary: false, env: { A: 'recipe', B: 'recipe', C: 'recipe' }, steps: [{ label: 'v', args: ['-p', 'prompts/v.md'] }] });
    const r = await runVigil(project, ['sequence', 'vars', '--var', 'A=cli'], { A: 'env', B: 'env' });
    expect(r.code, r.stderr).toBe(0);
    expect(project.logEntries().find((e) => e.step === 'v')!.prompt).toBe('a=cli b=env c=recipe\n');

    project.file('prompts/v.md', 'token: $VIGIL_TOKEN\n');
    const refused = await runVigil(project, ['sequence', 'vars'], { VIGIL_TOKEN: 'set-in-env' });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('variable $VIGIL_TOKEN is used in this prompt');
  });

  it('keeps output at or below outputPersistenceThreshold inline and writes larger output to a file it references', async () => {
    project = makeProject();
    customProvider(project);
    project.recipe({
      name: 'outputs',
      canary: false,
      steps: [
        { label: 'small', backend: 'fake', args: ['x'], outputPersistenceThreshold: 1000 },
        { label: 'big', backend: 'fake', args: ['x'], outputPersistenceThreshold: 3 },
      ],
    });
    const r = await runVigil(project, ['sequence', 'outputs']);
    expect(r.code, r.stderr).toBe(0);
    const run = lastRun(project);
    expect(stepOf(run, 'small')).toMatchObject({ output_file: null, output: 'phase 1\n' });
    expect(stepOf(run, 'big').output_file).toBe('steps/big.log');
    expect(readFileSync(join(project.root, '.vigil', 'runs', run.id, 'steps', 'big.log'), 'utf8')).toBe('phase 1\n');
  });
});
