// Step arguments: a misspelled prompt file is an error naming it, and flags
// that take a value keep it on the agent's command line.
import { afterEach, describe, expect, it } from 'vitest';
import { classifyArgs } from '../../src/recipes/step-args.ts';
import { customProvider, makeProject, type Project, runVigil } from './helpers.ts';

let project: Project;
afterEach(() => project?.cleanup());

describe('step arguments', () => {
  it('a prompt path that names no file stops the run before anything starts, naming it', async () => {
    project = makeProject();
    project.file('prompts/test.md', 'Run the tests.\n');
    project.recipe({ name: 'typo', canary: false, steps: [{ label: 'check', args: ['prompts/tset.md'] }, { label: 'notes', args: ['notes.txt'] }] });
    const r = await runVigil(project, ['sequence', 'typo']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('steps "check".args[0]: prompt file "prompts/tset.md" does not exist');
    expect(r.stderr).toContain('steps "notes".args[0]: prompt file "notes.txt" does not exist');
    expect(project.logEntries()).toEqual([]);
  });

  it('flags that take a value keep it on the command line and out of the prompt', async () => {
    project = makeProject();
    project.file('prompts/fix.md', 'Fix it.\n');
    project.recipe({
      name: 'flags',
      canary: false,
      steps: [{ label: 'fix', args: ['--allowedTools', 'Bash', '--add-dir', 'lib/extra', '--verbose', 'prompts/fix.md', '--mcp-config=m.json'] }],
    });
    const r = await runVigil(project, ['sequence', 'flags']);
    expect(r.code, r.stderr).toBe(0);
    const call = project.logEntries().find((e) => e.step === 'fix')!;
    const argv = (call.argv as string[]).join(' ');
    expect(argv).toContain('--allowedTools Bash --add-dir lib/extra --verbose --mcp-config=m.json');
    expect(call.prompt).toBe('Fix it.\n');
  });

  it('a one-word prompt after a flag is the prompt: `-p date` runs a custom agent with "date" on stdin', async () => {
    project = makeProject();
    customProvider(project);
    project.recipe({ name: 'oneword', canary: false, steps: [{ label: 'a', backend: 'fake', args: ['-p', 'date'] }, { label: 'b', backend: 'fake', args: ['--flavour', 'date'], depends_on: ['a'] }] });
    const r = await runVigil(project, ['sequence', 'oneword']);
    expect(r.code, r.stderr).toBe(0);
    const calls = project.logEntries().filter((e) => e.agent === 'custom' && e.canary === null);
    expect(calls.map((c) => [c.step, c.prompt, c.argv])).toEqual([
      ['a', 'date', ['-p', 'date']],
      ['b', 'date', ['--flavour', 'date']],
    ]);
  });

  it.each([
    [['-p', 'prompts/a.md'], ['flag', 'word']],
    [['--allowedTools', 'Bash', 'do it'], ['flag', 'value', 'word']],
    [['--verbose', 'fix'], ['flag', 'word']],
    [['--custom', 'value', 'fix the bug'], ['flag', 'value', 'word']],
    [['--custom', 'prompts/a.md'], ['flag', 'word']],
    [['--x=1', 'a'], ['flag', 'word']],
    [['-m', 'o3', '-c', 'k=v', 'text'], ['flag', 'value', 'flag', 'value', 'word']],
    [['-p', 'date'], ['flag', 'word']],
    [['--custom', 'date'], ['flag', 'word']],
    [['--custom', 'v', '--other', 'date'], ['flag', 'value', 'flag', 'word']],
  ])('classifies %j', (args, kinds) => {
    expect(classifyArgs(args)).toEqual(kinds);
  });
});
