// Issue 45 point 5: the plan is what the run does. For every runnable recipe
// type, `vigil sequence --dry-run --json` names each step's isolation and the
// agent command line it starts; the real run, with stand-in agents that log
// their argv and working directory, must start exactly those, where the plan
// said (the project itself, or a git worktree of it). And every refusal a run
// makes before it starts, `vigil recipe check` makes too.
import { existsSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { git } from './composite-helpers.ts';
import { makeProject, type Project, runVigil } from './helpers.ts';

let project: Project;
afterEach(() => project?.cleanup());

interface StepPlan {
  label: string;
  isolation: string;
  agent: { command: string; args: string[] } | { url: string } | null;
}
interface NodePlan {
  workspace: string;
  isolation: string;
  waves: StepPlan[][];
  children: NodePlan[];
}

/** `label where argv…` for every step of the plan; where: the project, or a worktree copy of it. */
function planned(node: NodePlan): string[] {
  const inCopy = node.workspace.includes('(a worktree copy the run makes of it)');
  const own = node.waves.flat().map((s) => {
    expect(s.agent, `step ${s.label} has no agent command in the plan`).not.toBeNull();
    const where = inCopy || s.isolation.startsWith('worktree') ? 'worktree' : 'project';
    return `${s.label} ${where} ${(s.agent as { args: string[] }).args.join(' ')}`;
  });
  return [...own, ...node.children.flatMap(planned)];
}

/** The same from the stand-ins' log: what each started step was given, and where it ran. */
function started(p: Project): string[] {
  const root = realpathSync(p.root);
  return p
    .logEntries()
    .filter((e) => e.step && !e.canary && e.argv)
    .map((e) => {
      // The worktrees are gone once merged back: where they were says what they were.
      const cwd = e.cwd as string;
      const where = cwd === root ? 'project' : cwd.startsWith(`${root}/.vigil/worktrees/`) ? 'worktree' : `elsewhere (${cwd})`;
      const args = (e.argv as string[]).map((a) => a.replace(new RegExp(`^${p.root}/\\.vigil/runs/[^/]+`), '<run>'));
      return `${e.step} ${where} ${args.join(' ')}`;
    });
}

function gitProject(): Project {
  const p = makeProject({ codex: true });
  p.yml(`default_backend: fake\nproviders:\n  fake:\n    type: custom\n    command: ${p.agent}\n`);
  p.file('.gitignore', '.home/\n.bin/\n.fakes/\n.vigil/\nvigil.yml\n');
  p.file('README.md', 'base\n');
  git(p.root, 'init', '-q', '-b', 'main');
  git(p.root, 'config', 'user.email', 'test@localhost');
  git(p.root, 'config', 'user.name', 'test');
  git(p.root, 'add', '-A');
  git(p.root, 'commit', '-q', '-m', 'init');
  return p;
}

const say = (word: string) => `SAY=${word}`;

function recipes(p: Project): void {
  p.recipe({
    name: 'work',
    canary: false,
    env: { WHO: 'w' },
    steps: [
      { label: 'write', args: ['--who', '$WHO', `WRITE=out-$WHO.txt:x ${say('DONE')}`] },
      { label: 'check', prompt: say('DONE'), args: ['--model-free'], depends_on: ['write'] },
    ],
  });
  p.recipe({
    name: 'agents',
    canary: false,
    transfer_mode: 'worktree',
    steps: [
      { label: 'claude-step', backend: 'claude', prompt: 'Review', model: 'm1', effort: 'high', args: ['--allowedTools', 'Read'] },
      { label: 'codex-step', backend: 'codex', prompt: 'Build', effort: 'max', permission_mode: 'acceptEdits' },
    ],
  });
  p.recipe({ name: 'judge', canary: false, steps: [{ label: 'verdict', args: [say('{"winner":"blue","reason":"ok","done":true}')] }] });
  p.recipe({ name: 'score', canary: false, steps: [{ label: 'score', args: [say('{"score":1}')] }] });
  p.recipe({ name: 'pipe', type: 'pipeline', sequences: [{ name: 'work', vars: { WHO: 'p1' } }, { name: 'agents' }] });
  p.recipe({ name: 'comp', type: 'compound', layers: [{ name: 'l1', sequence: 'work', vars: { WHO: 'c1' } }, { name: 'l2', sequence: 'work', depends_on: ['l1'], vars: { WHO: 'c2' } }] });
  p.recipe({ name: 'par', type: 'parallel', recipe: 'work', vars: [{ WHO: 'x0' }, { WHO: 'x1' }] });
  p.recipe({ name: 'adv', type: 'adversarial', blue: { recipe: 'work', vars: { WHO: 'blue' } }, red: { recipe: 'judge' }, judge: { recipe: 'judge' } });
  p.recipe({ name: 'conv', type: 'convergent', recipe: 'work', scorer: 'score', strategies: 2 });
  p.recipe({ name: 'sub', type: 'substrate', canary: false, steps: [{ label: 'only', args: [say('DONE')] }] });
}

describe('the dry run is the run', () => {
  it.each([['work'], ['agents'], ['pipe'], ['comp'], ['par'], ['adv'], ['conv'], ['sub']])(
    '%s: every step starts the argv the plan printed, isolated as the plan said',
    async (name) => {
      project = gitProject();
      recipes(project);
      const dry = await runVigil(project, ['sequence', name, '--dry-run', '--json']);
      expect(dry.code, dry.stderr + dry.stdout).toBe(0);
      const { plan } = JSON.parse(dry.stdout) as { plan: NodePlan };
      if (['par', 'adv', 'conv'].includes(name)) expect(plan.isolation).toMatch(/^worktree: a git worktree/);
      else if (name !== 'agents') expect(plan.isolation).not.toMatch(/^worktree/);
      const expected = planned(plan);
      rmSync(project.log, { force: true });
      const run = await runVigil(project, ['sequence', name]);
      expect(run.code, run.stderr + run.stdout).toBe(0);
      expect(started(project).sort()).toEqual(expected.sort());
    },
    120_000,
  );
});

// Each case: a recipe a run refuses before it starts, and words of the reason both must give.
const refusals: Array<[string, (p: Project) => void, string]> = [
  ['flags codex does not take', (p) => p.recipe({ name: 'r', canary: false, steps: [{ label: 'a', backend: 'codex', prompt: 'x', args: ['--allowedTools', 'Read'] }] }), '--allowedTools'],
  ['an unknown backend', (p) => p.recipe({ name: 'r', canary: false, steps: [{ label: 'a', backend: 'nosuch', prompt: 'x' }] }), 'unknown backend "nosuch"'],
  ['a mentu cli agent with no backend', (p) => p.recipe({ name: 'r', canary: false, providers: { gemini: { api: 'cli' } }, steps: [{ label: 'a', backend: 'gemini', prompt: 'x' }] }), 'configure it as a custom provider'],
  ['a usd budget no backend can count', (p) => p.recipe({ name: 'r', canary: false, budget: { usd: 1 }, steps: [{ label: 'a', backend: 'codex', prompt: 'x' }] }), 'budget.usd covers step "a"'],
  ['an unknown auth profile', (p) => p.recipe({ name: 'r', canary: false, steps: [{ label: 'a', prompt: 'x', auth: 'team' }] }), 'no profile "team"'],
  ['a provider program that is not there', (p) => { p.yml('default_backend: gone\nproviders:\n  gone:\n    type: custom\n    command: /nonexistent/agent\n'); p.recipe({ name: 'r', canary: false, steps: [{ label: 'a', prompt: 'x' }] }); }, '/nonexistent/agent is not an executable file'],
  ['a variable set nowhere', (p) => p.recipe({ name: 'r', canary: false, steps: [{ label: 'a', prompt: 'use $NOWHERE' }] }), 'NOWHERE'],
  ['a missing binary', (p) => p.recipe({ name: 'r', canary: false, requires: { bins: ['no-such-binary-here'] }, steps: [{ label: 'a', prompt: 'x' }] }), 'no-such-binary-here'],
  ['a destructive intent', (p) => p.recipe({ name: 'r', canary: false, steps: [{ label: 'a', prompt: 'x', build_command: 'rm -rf ~' }] }), 'destructive'],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: ${steps.nope.output} is vigil's own reference, rendered by the runner
  ["another step's output that does not exist", (p) => p.recipe({ name: 'r', canary: false, steps: [{ label: 'a', prompt: 'x ${steps.nope.output}' }] }), 'nope'],
  ['a step on claude when claude is not installed', (p) => { rmSync(join(p.bin, 'claude')); p.recipe({ name: 'r', canary: false, steps: [{ label: 'a', backend: 'claude', prompt: 'x' }] }); }, 'claude is not on PATH'],
  [
    'a child of a parallel recipe on a backend that does not take its flag',
    (p) => {
      p.recipe({ name: 'kid', canary: false, steps: [{ label: 'a', backend: 'codex', prompt: 'x', args: ['--allowedTools', 'Read'] }] });
      p.recipe({ name: 'r', type: 'parallel', recipe: 'kid', vars: [{ A: '1' }] });
    },
    '--allowedTools',
  ],
];

describe('every refusal before a run starts, recipe check makes too', () => {
  it.each(refusals)('%s', async (_what, write, words) => {
    project = makeProject({ codex: true });
    project.yml(`default_backend: fake\nproviders:\n  fake:\n    type: custom\n    command: ${project.agent}\n`);
    write(project);
    const check = await runVigil(project, ['recipe', 'check', 'r']);
    expect(check.code, check.stdout + check.stderr).toBe(2);
    expect(check.stdout + check.stderr).toContain(words);
    const dry = await runVigil(project, ['sequence', 'r', '--dry-run']);
    expect(dry.code, dry.stdout).toBe(2);
    const run = await runVigil(project, ['sequence', 'r']);
    // 2 for a recipe in error, 1 for a run refused by what it found (src/errors/exit-codes.ts).
    expect([1, 2], run.stdout + run.stderr).toContain(run.code);
    expect(run.stderr).toContain(words);
    expect(existsSync(join(project.root, '.vigil', 'runs'))).toBe(false);
  }, 60_000);
});
