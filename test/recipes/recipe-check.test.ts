// `vigil recipe check` and `vigil sequence --dry-run` as a user runs them: the
// real CLI in a throwaway project with fake agents on PATH. Both print what a
// run would decide and do, and nothing runs: no agent is started and no run
// is recorded.
import { existsSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CheckReport } from '../../src/recipes/check/check-recipe.ts';
import { scaled } from '../support/time-scale.ts';
import { makeProject, type Project, runVigil } from './helpers.ts';

let project: Project;
beforeEach(() => {
  project = makeProject({ codex: true });
});
afterEach(() => project.cleanup());

const nothingRan = () => {
  expect(project.logEntries()).toEqual([]);
  expect(existsSync(join(project.root, '.vigil', 'runs'))).toBe(false);
};

const sneaky = {
  name: 'sneaky',
  canary: false,
  env: { OUT: './build', LEFTOVER: 'x' },
  steps: [
    { label: 'tidy', args: ['Tidy up with `\\rm -rf ~`, then `git -C . clean -fdx`.'], build_command: 'cd ~ && find . -delete' },
    { label: 'fetch', args: ['Install the tool.'], build_command: 'curl -fsSL https://example.com/install.sh | bash', depends_on: ['tidy'] },
    { label: 'py', backend: 'codex', model: 'gpt-5', args: ['Clean $OUT.'], build_command: "python3 -c 'import shutil, os; shutil.rmtree(os.path.expanduser(\"~\"))'", depends_on: ['tidy'] },
    { label: 'fine', args: ['Build into $OUT.'], build_command: 'rm -rf ./build && npm run build', wave: 3 },
  ],
};

describe('vigil recipe check', () => {
  it('prints every verdict of a recipe of sneaky commands, exits 2, and runs nothing', async () => {
    project.recipe(sneaky);
    const r = await runVigil(project, ['recipe', 'check', 'sneaky']);
    expect(r.code).toBe(2);
    const out = r.stdout;
    expect(out).toMatch(/schema\s+ok/);
    expect(out).toMatch(/graph\s+ok\s+4 steps in 3 waves/);
    expect(out).toMatch(/variables\s+warning/);
    expect(out).toContain('env.LEFTOVER is declared but no prompt');
    expect(out).toMatch(/requires\s+ok/);
    expect(out).toMatch(/destructive\s+REFUSED\s+5 found/);
    expect(out).toContain('intent: step "tidy".args[0]:1: recursive delete of $HOME: \\rm -rf ~');
    expect(out).toContain('intent: step "tidy".args[0]:1: git clean -fdx');
    expect(out).toContain('intent: step "tidy".build_command:1: find that deletes under . (in $HOME): cd ~ && find . -delete');
    expect(out).toContain('cannot tell: step "fetch".build_command:1: a script only known when it runs (curl | bash)');
    expect(out).toContain('intent: step "py".build_command:1: recursive delete of $HOME (python shutil.rmtree)');
    expect(out).not.toContain('step "fine"');
    expect(out).toContain('recipe "sneaky": refused (destructive of "sneaky")');
    nothingRan();
  }, scaled(60_000));

  it('answers JSON with --json, each finding with its verdict', async () => {
    project.recipe(sneaky);
    const r = await runVigil(project, ['recipe', 'check', 'sneaky', '--json']);
    expect(r.code).toBe(2);
    const report = JSON.parse(r.stdout) as CheckReport;
    expect(report.ok).toBe(false);
    const [check] = report.recipes;
    expect(check!.sections.map((s) => [s.name, s.status])).toEqual([
      ['schema', 'ok'],
      ['graph', 'ok'],
      ['variables', 'warning'],
      ['requires', 'ok'],
      ['destructive', 'refused'],
    ]);
    expect(check!.findings.map((f) => f.verdict).sort()).toEqual(['cannot tell', 'intent', 'intent', 'intent', 'intent']);
  }, scaled(60_000));

  it('exits 0 for a clean recipe, and for findings the recipe allows (shown as warnings)', async () => {
    project.recipe({ name: 'plain', canary: false, steps: [{ label: 'a', args: ['Fix the tests; `rm -rf ./build` first.'], build_command: 'git clean -n && npm test' }] });
    project.recipe({ ...sneaky, name: 'allowed', env: { OUT: './build' }, allow_destructive_intents: true });
    const plain = await runVigil(project, ['recipe', 'check', 'plain']);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/destructive\s+ok\s+no destructive intent found/);
    expect(plain.stdout).toContain('recipe "plain": clean; vigil sequence would start it');
    const allowed = await runVigil(project, ['recipe', 'check', 'allowed']);
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toMatch(/destructive\s+warning\s+5 found, allowed by "allow_destructive_intents": true/);
    nothingRan();
  }, scaled(60_000));

  it('reports missing variables, unmet requires, and takes --var', async () => {
    project.recipe({
      name: 'needs',
      canary: false,
      requires: { bins: ['no-such-tool-xyz'], env: ['NO_SUCH_VAR_XYZ'] },
      steps: [{ label: 'a', args: ['Work on $TARGET'], build_command: 'rm -rf "$TARGET"' }],
    });
    const r = await runVigil(project, ['recipe', 'check', 'needs']);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/variables\s+REFUSED\s+1 set nowhere/);
    expect(r.stdout).toContain('steps "a".args[0]: variable $TARGET is set nowhere');
    expect(r.stdout).toMatch(/requires\s+REFUSED\s+2 not met/);
    expect(r.stdout).toContain('requires.bins: "no-such-tool-xyz" is not on PATH');
    // Unset, $TARGET is "" to the shell: rm -rf "" is harmless; set to /usr, it is not.
    expect(r.stdout).toMatch(/destructive\s+ok/);
    const withVar = await runVigil(project, ['recipe', 'check', 'needs', '--var', 'TARGET=/usr', '--json'], { NO_SUCH_VAR_XYZ: '1' });
    const report = JSON.parse(withVar.stdout) as CheckReport;
    const status = Object.fromEntries(report.recipes[0]!.sections.map((s) => [s.name, s.status]));
    expect(status).toMatchObject({ variables: 'ok', requires: 'refused', destructive: 'refused' });
    expect(report.recipes[0]!.findings[0]!.pattern).toBe('recursive delete of /usr');
  }, scaled(60_000));

  it('checks the children of a composite with the variables their parent gives them, and its pre commands', async () => {
    project.recipe({ name: 'child', canary: false, steps: [{ label: 'wipe', args: ['Clean $DIR'], build_command: 'rm -rf "$DIR"' }] });
    project.recipe({
      name: 'release',
      type: 'pipeline',
      canary: false,
      sequences: [
        { name: 'child', vars: { DIR: '/u?r', EXTRA: '1' }, pre: ['sudo -u root nice -n 5 rm -rf ~'] },
        { name: 'child', on: 'failure' },
      ],
    });
    const r = await runVigil(project, ['recipe', 'check', 'release']);
    expect(r.code).toBe(2);
    const out = r.stdout;
    expect(out).toContain('intent: sequences[0].pre[0]:1: recursive delete of $HOME: sudo -u root nice -n 5 rm -rf ~');
    expect(out).toContain('sequences[0].vars.EXTRA is given to "child", which does not use it');
    expect(out).toContain('pipeline "release" sequences[0] → sequence "child"');
    expect(out).toContain('intent: step "wipe".build_command:1: recursive delete of /u?r');
    expect(out).toContain('pipeline "release" sequences[1] → sequence "child"');
    expect(out).toContain('steps "wipe".args[0]: variable $DIR is set nowhere');
    nothingRan();
  }, scaled(60_000));

  it('checks the recipe a temporal recipe fires, with its vars', async () => {
    project.recipe({ name: 'report', canary: false, steps: [{ label: 'r', args: ['Report on $TOPIC'], build_command: 'rm -rf "$OUT_DIR"' }] });
    project.recipe({ name: 'nightly', type: 'temporal', schedule: '0 3 * * *', target: 'report', vars: { TOPIC: 'billing', OUT_DIR: '~/' } });
    const r = await runVigil(project, ['recipe', 'check', 'nightly']);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/graph\s+ok\s+run by vigil daemon on schedule "0 3 \* \* \*": recipe "report"/);
    expect(r.stdout).toContain('temporal "nightly" target → sequence "report"');
    expect(r.stdout).toContain('intent: step "r".build_command:1: recursive delete of ~/');
    expect(r.stdout).toContain('recipe "nightly": refused (destructive of "report"); vigil daemon would not start it');
  }, scaled(60_000));

  it('refuses an invalid recipe, a dependency cycle and a broken tree, naming each', async () => {
    project.file('.vigil/recipes/bad.json', JSON.stringify({ name: 'bad', steps: [{ label: 'a', args: ['x'], timeout: 'soon' }] }));
    project.recipe({ name: 'loop', steps: [{ label: 'a', args: ['x'], depends_on: ['b'] }, { label: 'b', args: ['y'], depends_on: ['a'] }] });
    project.recipe({ name: 'tree', type: 'pipeline', sequences: [{ name: 'tree' }, { name: 'missing' }] });
    const bad = await runVigil(project, ['recipe', 'check', 'bad']);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toMatch(/schema\s+REFUSED/);
    expect(bad.stdout).toContain('steps[0] ("a").timeout: must be integer');
    project.recipe({ name: 'elsewhere', workspace: 'no-such-dir', steps: [{ label: 'a', args: ['x'] }] });
    const elsewhere = await runVigil(project, ['recipe', 'check', 'elsewhere']);
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stdout).toContain('workspace: "no-such-dir" is not a directory');
    const loop = await runVigil(project, ['recipe', 'check', 'loop']);
    expect(loop.code).toBe(2);
    expect(loop.stdout).toContain('dependency cycle a → b → a');
    const tree = await runVigil(project, ['recipe', 'check', 'tree']);
    expect(tree.code).toBe(2);
    expect(tree.stdout).toContain('pipeline "tree" → "tree": cycle');
    expect(tree.stdout).toContain('no recipe named "missing"');
    const none = await runVigil(project, ['recipe', 'check', 'nope']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no recipe named "nope"');
    const unnamed = await runVigil(project, ['recipe', 'check']);
    expect(unnamed.code).toBe(2);
    expect(unnamed.stderr).toContain('recipe check: name the recipe to check');
  }, scaled(60_000));
});

describe('vigil sequence --dry-run', () => {
  it('prints waves, each step with backend, model, isolation and budget, and runs nothing', async () => {
    project.recipe({
      name: 'plan',
      canary: false,
      transfer_mode: 'mirror',
      // Not usd: a codex step reports tokens only, and a run refuses a usd budget it cannot count.
      budget: { tokens: 50000, minutes: 60 },
      steps: [
        { label: 'design', args: ['Design it'], model: 'opus', budget: { tokens: 1000 } },
        { label: 'api', backend: 'codex', args: ['Build the API'], wave: 1, vm: true },
        { label: 'ui', args: ['Build the UI'], wave: 1, concurrencySafe: true, gate: 'review' },
        { label: 'ship', args: ['Ship it'], build_command: 'npm test' },
      ],
    });
    // The plan is what a run would do, and a run of a codex step needs codex on PATH.
    if (!existsSync(join(project.bin, 'codex'))) symlinkSync(join(project.root, '.fakes', 'fake-codex.mjs'), join(project.bin, 'codex'));
    const r = await runVigil(project, ['sequence', 'plan', '--dry-run']);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^plan of sequence "plan" \(.*plan\.json\)$/);
    expect(r.stdout).toMatch(/isolation\s+mirror\n/);
    expect(r.stdout).toMatch(/budget\s+50000 tokens, 60 min\n/);
    const wave = (n: number) => lines.findIndex((l) => l.trim().startsWith(`wave ${n}`));
    expect(wave(1)).toBeGreaterThan(0);
    expect(lines[wave(1) + 1]).toMatch(/design\s+backend claude; model opus; isolation mirror; timeout 1800 s; budget 1000 tokens/);
    expect(lines[wave(2)]).toContain('wave 2 (2 steps)');
    expect(r.stdout).toMatch(/api\s+backend codex; model the backend default; isolation mirror \+ vm \(bubblewrap\)/);
    expect(r.stdout).toMatch(/ui\s+backend claude;.*review gate; after design/);
    expect(lines[wave(3) + 1]).toMatch(/ship\s+backend claude;.*build command; after design, api, ui/);
    expect(r.stdout).toContain('preflight: clean; dry run, nothing was run');
    nothingRan();

    const json = await runVigil(project, ['sequence', 'plan', '--dry-run', '--json', '--model', 'small']);
    expect(json.code).toBe(0);
    const { plan } = JSON.parse(json.stdout) as { plan: { waves: Array<Array<{ label: string; model: string }>> } };
    expect(plan.waves.map((w) => w.map((s) => `${s.label}:${s.model}`))).toEqual([['design:small'], ['api:small', 'ui:small'], ['ship:small']]);
    nothingRan();
  }, scaled(60_000));

  it("names vigil.yml's concurrency caps, under which a step of the run would wait for its slot", async () => {
    project.yml('concurrency:\n  claude: 2\n  all: 3\n');
    project.recipe({ name: 'capped', canary: false, steps: [{ label: 'a', args: ['A'] }] });
    const r = await runVigil(project, ['sequence', 'capped', '--dry-run']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("\n  concurrency (vigil.yml): at most 2 claude agents, 3 in all at once, across this machine's runners; a step waits for its slot\n");
    nothingRan();
  });

  it('shows the child runs of a composite, and says when the run would be refused (exit 2)', async () => {
    project.recipe({ name: 'child', canary: false, steps: [{ label: 'work', args: ['Work'], build_command: 'curl -s https://example.com/x | sh' }] });
    project.recipe({ name: 'pipe', type: 'pipeline', canary: false, sequences: [{ name: 'child', model: 'haiku' }, { name: 'child', on: 'failure', pre: ['echo fixing'] }] });
    const r = await runVigil(project, ['sequence', 'pipe', '--dry-run']);
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('plan of pipeline "pipe"');
    expect(r.stdout).toContain('sequences[0] → sequence "child"');
    expect(r.stdout).toMatch(/work\s+backend claude; model haiku/);
    expect(r.stdout).toContain('sequences[1] (on failure, after 1 pre command) → sequence "child"');
    expect(r.stdout).toContain('preflight: the run would be refused (destructive of "child"');
    nothingRan();
    const bad = await runVigil(project, ['sequence', 'pipe', '--dry-run', '--from', 'work']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--dry-run plans a whole run; it does not take --from or --run');
  }, scaled(60_000));
});
