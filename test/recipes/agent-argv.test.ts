// The command lines vigil builds for claude and codex, checked against the
// `--help` texts of the real CLIs (claude 2.1.197, codex-cli 0.171.0,
// recorded in test/fixtures/agent-help): every flag used exists there, with
// the arity vigil reads it with.
import { describe, expect, it } from 'vitest';
import { type Arity, CLAUDE_FLAGS, CODEX_EXEC_FLAGS, mapStepFlags } from '../../src/recipes/backends/agent-flags.ts';
import { claudeArgs } from '../../src/recipes/backends/claude.ts';
import { codexArgs } from '../../src/recipes/backends/codex.ts';
import { classifyArgs } from '../../src/recipes/step-args.ts';
import { helpText, parseHelpFlags } from './agent-help.ts';

const claudeHelp = parseHelpFlags(helpText('claude-2.1.197.help.txt'));
const codexHelp = parseHelpFlags(helpText('codex-exec-0.171.0.help.txt'));

/** The flags of an argv (a `--flag=value` by its name), each with whether the next argument was consumed as its value. */
function flagsOf(argv: string[], help: Map<string, Arity>): string[] {
  const flags: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('-') || a === '-') continue;
    const name = a.includes('=') ? a.slice(0, a.indexOf('=')) : a;
    flags.push(name);
    if (!a.includes('=') && help.get(name) === 'value') i++;
  }
  return flags;
}

const EFFORTS = [undefined, 'low', 'medium', 'high', 'max'] as const;
const MODES = [undefined, 'acceptEdits', 'bypassPermissions'] as const;
/** Args a recipe written for claude carries, and some codex users write. */
const STEP_FLAGS = [
  ['-p'],
  ['--print'],
  ['--model', 'm-1'],
  ['--add-dir', 'lib'],
  ['--permission-mode', 'acceptEdits'],
  ['--permission-mode=bypassPermissions'],
];

describe('flag tables', () => {
  it.each([
    ['claude', CLAUDE_FLAGS, claudeHelp],
    ['codex exec', CODEX_EXEC_FLAGS, codexHelp],
  ] as const)('%s: vigil reads each flag as its --help lists it, and knows every flag there', (_name, table, help) => {
    expect(help.size).toBeGreaterThan(20);
    expect(Object.fromEntries(table)).toEqual(Object.fromEntries(help));
  });
});

describe('claude argv', () => {
  it('uses only flags claude --help lists, for every model, effort, permission mode and step flag', () => {
    for (const effort of EFFORTS)
      for (const permissionMode of MODES)
        for (const flags of STEP_FLAGS)
          for (const effortFlag of [true, false]) {
            const kinds = classifyArgs([...flags, 'do it'], 'claude');
            const mapped = mapStepFlags('claude', flags.map((value, i) => ({ value, kind: kinds[i] as 'flag' | 'value' })));
            expect(mapped.problems).toEqual([]);
            const argv = claudeArgs({ model: 'claude-sonnet-4-5', ...(effort ? { effort } : {}), ...(permissionMode ? { permissionMode } : {}), extraArgs: mapped.argv }, effortFlag);
            for (const flag of flagsOf(argv, claudeHelp)) expect(claudeHelp.has(flag), `${flag} in ${argv.join(' ')}`).toBe(true);
            // Print mode once, with the stream-json output vigil reads.
            expect(argv.filter((a) => a === '-p' || a === '--print')).toEqual(['-p']);
            expect(argv.join(' ')).toContain('--output-format stream-json --verbose');
          }
  });

  it('the permission modes and efforts vigil passes are choices claude lists', () => {
    const text = helpText('claude-2.1.197.help.txt').replace(/\s+/g, ' ');
    for (const mode of MODES.filter(Boolean)) expect(text).toContain(`"${mode}"`);
    expect(text).toContain('(low, medium, high, xhigh, max)');
  });
});

describe('codex argv', () => {
  it('uses only flags codex exec --help lists, for every model, effort, permission mode and step flag written for claude', () => {
    for (const effort of EFFORTS)
      for (const permissionMode of MODES)
        for (const flags of STEP_FLAGS) {
          const kinds = classifyArgs([...flags, 'do it'], 'codex');
          expect(kinds.at(-1)).toBe('word');
          const mapped = mapStepFlags('codex', flags.map((value, i) => ({ value, kind: kinds[i] as 'flag' | 'value' })));
          expect(mapped.problems).toEqual([]);
          const argv = codexArgs({ model: 'gpt-5-codex', ...(effort ? { effort } : {}), ...(permissionMode ? { permissionMode } : {}), extraArgs: mapped.argv });
          expect(argv[0]).toBe('exec');
          // The prompt is read from stdin: `-` as the PROMPT argument.
          expect(argv.at(-1)).toBe('-');
          for (const flag of flagsOf(argv.slice(1, -1), codexHelp)) expect(codexHelp.has(flag), `${flag} in ${argv.join(' ')}`).toBe(true);
          // claude's -p/--print never reaches codex, whose -p is --profile.
          expect(argv).not.toContain('-p');
          expect(argv).not.toContain('--print');
        }
  });

  it("maps claude's --permission-mode to codex's sandbox, and the sandbox values are ones codex lists", () => {
    expect(mapStepFlags('codex', [{ value: '--permission-mode', kind: 'flag' }, { value: 'acceptEdits', kind: 'value' }]).argv).toEqual(['--sandbox', 'workspace-write']);
    expect(mapStepFlags('codex', [{ value: '--permission-mode=bypassPermissions', kind: 'flag' }]).argv).toEqual(['--dangerously-bypass-approvals-and-sandbox']);
    expect(codexArgs({ permissionMode: 'acceptEdits', extraArgs: [] })).toContain('workspace-write');
    expect(helpText('codex-exec-0.171.0.help.txt')).toContain('[possible values: read-only, workspace-write, danger-full-access]');
  });

  it("the prompt of `-p summarize` is `summarize` for every backend (codex's -p would take it as a profile)", () => {
    for (const dialect of ['claude', 'codex', 'generic'] as const) expect(classifyArgs(['-p', 'summarize'], dialect)).toEqual(['flag', 'word']);
  });

  it('names the flags a backend does not have, and those vigil sets itself', () => {
    const problems = mapStepFlags('codex', [
      { value: '--allowedTools', kind: 'flag' },
      { value: 'Bash', kind: 'value' },
      { value: '--json', kind: 'flag' },
    ]).problems;
    expect(problems.map((p) => p.flag)).toEqual(['--allowedTools', '--json']);
    expect(mapStepFlags('claude', [{ value: '--max-turns', kind: 'flag' }, { value: '3', kind: 'value' }]).problems[0]!.why).toContain('"max_phases"');
    expect(mapStepFlags('claude', [{ value: '--sandbox', kind: 'flag' }, { value: 'read-only', kind: 'value' }]).problems[0]!.why).toContain("it is codex's flag");
  });
});
