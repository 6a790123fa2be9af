// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${steps.…} in these strings is vigil's own reference syntax, filled in by the runner
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeModelServer, startFakeModelServer } from '../fakes/fake-openai-server.ts';
import { lastRun, makeProject, type Project, runVigil, stepOf } from './helpers.ts';

let project: Project;
let server: FakeModelServer | null = null;
afterEach(async () => {
  project?.cleanup();
  await server?.close();
  server = null;
});

const schema = {
  type: 'object',
  required: ['count', 'verdict'],
  properties: { count: { type: 'integer' }, verdict: { type: 'string', enum: ['ok', 'bad'] } },
};

describe('outputs between steps and structured output', () => {
  it('claude: passes output_schema as --json-schema, validates the answer and lets later steps read output and json fields', async () => {
    project = makeProject();
    project.file('prompts/use.md', 'Count ${steps.answer.json.count}, verdict ${steps.answer.json.verdict}; notes said: ${steps.notes.output}\n');
    project.recipe({
      name: 'structured',
      canary: false,
      steps: [
        { label: 'notes', args: ['SAY=remember-the-milk'] },
        { label: 'answer', args: ['JSON={"count":3,"verdict":"ok"}'], output_schema: schema },
        { label: 'use', args: ['-p', 'prompts/use.md'], depends_on: [] },
        { label: 'only-if-many', args: ['many'], if: 'steps.answer.json.count > 2', depends_on: [] },
        { label: 'only-if-few', args: ['few'], if: 'steps.answer.json.count <= 2', depends_on: [] },
      ],
    });
    const r = await runVigil(project, ['sequence', 'structured']);
    expect(r.code, r.stderr).toBe(0);
    const run = lastRun(project);
    expect(stepOf(run, 'answer').json).toEqual({ count: 3, verdict: 'ok' });
    expect(stepOf(run, 'only-if-many').status).toBe('succeeded');
    expect(stepOf(run, 'only-if-few').status).toBe('skipped');
    const calls = project.logEntries();
    const answer = calls.find((c) => c.step === 'answer')!;
    const argv = answer.argv as string[];
    expect(JSON.parse(argv[argv.indexOf('--json-schema') + 1]!)).toEqual(schema);
    // `use` waits for the steps it reads (depends_on: [] notwithstanding) and gets their outputs.
    const use = calls.find((c) => c.step === 'use')!;
    expect(use.prompt).toContain('Count 3, verdict ok; notes said: ');
    expect(use.prompt).toContain('remember-the-milk');
    expect(use.argv as string[]).not.toContain('--json-schema');
  });

  it('fails a step whose answer does not match its output_schema, naming the field', async () => {
    project = makeProject();
    project.recipe({
      name: 'mismatch',
      canary: false,
      steps: [
        { label: 'answer', args: ['JSON={"count":"many","verdict":"ok"}'], output_schema: schema },
        { label: 'after', args: ['x'] },
      ],
    });
    const r = await runVigil(project, ['sequence', 'mismatch']);
    expect(r.code).toBe(1);
    const run = lastRun(project);
    expect(stepOf(run, 'answer').status).toBe('failed');
    expect(stepOf(run, 'answer').reason).toContain('/count must be integer');
    expect(stepOf(run, 'after').status).toBe('skipped');
  });

  it('codex gets --output-schema with a file holding the schema; an HTTP provider gets JSON mode', async () => {
    project = makeProject({ codex: true });
    server = await startFakeModelServer();
    project.yml(`providers:\n  local:\n    type: openai\n    base_url: ${server.url}/v1\n    models: [fake-7b]\n`);
    project.recipe({
      name: 'both',
      canary: false,
      steps: [
        { label: 'cx', backend: 'codex', args: ['JSON={"count":1,"verdict":"bad"}'], output_schema: schema },
        { label: 'api', backend: 'local', args: ['JSON={"count":2,"verdict":"ok"}'], output_schema: schema },
        { label: 'sum', backend: 'local', args: ['codex ${steps.cx.json.count} api ${steps.api.json.count} SAY=fine'] },
      ],
    });
    const r = await runVigil(project, ['sequence', 'both']);
    expect(r.code, r.stderr).toBe(0);
    const run = lastRun(project);
    expect(stepOf(run, 'cx').json).toEqual({ count: 1, verdict: 'bad' });
    expect(stepOf(run, 'api').json).toEqual({ count: 2, verdict: 'ok' });
    const cx = project.logEntries().find((c) => c.agent === 'codex' && c.step === 'cx')!;
    const argv = cx.argv as string[];
    const file = argv[argv.indexOf('--output-schema') + 1]!;
    expect(argv.at(-1)).toBe('-');
    expect(existsSync(file)).toBe(true);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(schema);
    const apiCall = server.requests.find((q) => q.body.messages?.[0]?.content.includes('"count":2'))!;
    expect(apiCall.body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'output', schema } });
    const sumCall = server.requests.find((q) => q.body.messages?.[0]?.content.includes('SAY=fine'))!;
    expect(sumCall.body.messages?.[0]?.content).toContain('codex 1 api 2');
    expect(sumCall.body.response_format).toBeUndefined();
  });

  it('refuses references to an unknown step, to json of a step without output_schema, and an invalid schema', async () => {
    project = makeProject();
    project.recipe({
      name: 'badrefs',
      canary: false,
      steps: [
        { label: 'a', args: ['hello'] },
        { label: 'b', args: ['x ${steps.nope.output}'] },
        { label: 'c', args: ['y ${steps.a.json.count}'] },
      ],
    });
    const r = await runVigil(project, ['sequence', 'badrefs']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('step "b": ${steps.nope.output}: no step "nope"');
    expect(r.stderr).toContain('step "c": ${steps.a.json.count}: step "a" has no output_schema');
    project.recipe({ name: 'badschema', canary: false, steps: [{ label: 'a', args: ['x'], output_schema: { type: 'nonsense' } }] });
    const s = await runVigil(project, ['sequence', 'badschema']);
    expect(s.code).toBe(2);
    expect(s.stderr).toContain('steps[0] ("a").output_schema: not a valid JSON Schema');
    expect(existsSync(`${project.root}/.vigil/runs`)).toBe(false);
  });
});
