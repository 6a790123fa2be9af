// `loop: {until, max_iterations}` and continued sessions, end to end: the
// real `vigil sequence` runs the fake claude (test/fakes/fake-claude.mjs),
// which logs its argv, counts its runs in a file and says what its prompt
// tells it to; the run record and the argv show what happened.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lastRun, makeProject, type Project, runVigil, startVigil, stepOf } from './helpers.ts';

let project: Project;
afterEach(() => project?.cleanup());

/** The argv of each claude run of a step (the fake logs one entry per run). */
function claudeRuns(p: Project, step: string): string[][] {
  return p.logEntries()
    .filter((e) => e.agent === 'claude' && e.step === step && !String(e.prompt).includes('connectivity check'))
    .map((e) => e.argv as string[]);
}

function resumeOf(argv: string[]): string | null {
  const i = argv.indexOf('--resume');
  return i >= 0 ? argv[i + 1]! : null;
}

describe('loop until', () => {
  it('runs the agent again, continuing its session, until the build passes on iteration 3', async () => {
    project = makeProject();
    project.recipe({
      name: 'fix',
      canary: false,
      steps: [{ label: 'fix', prompt: 'Make the build pass. COUNT=count.txt', build_command: 'test "$(cat count.txt)" -ge 3', loop: { until: { build: true }, max_iterations: 5 } }],
    });
    const plan = await runVigil(project, ['sequence', 'fix', '--dry-run']);
    expect(plan.stdout).toContain('build command; loop until build_command passing, at most 5 iterations');
    const r = await runVigil(project, ['sequence', 'fix']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const step = stepOf(lastRun(project), 'fix');
    expect(step.status).toBe('succeeded');
    expect(step.loop?.iteration).toBe(3);
    expect(step.loop?.iterations.map((i) => i.build)).toEqual(['failed', 'failed', 'passed']);
    expect(step.loop?.stopped).toBe('build_command passing held after 3 iterations');
    // Each iteration's usage is its own (the fake reports 10 + 5 tokens a turn).
    for (const i of step.loop?.iterations ?? []) expect(i.usage.input_tokens + i.usage.output_tokens).toBe(15);
    const runs = claudeRuns(project, 'fix');
    expect(runs).toHaveLength(3);
    expect(resumeOf(runs[0]!)).toBeNull();
    expect(step.session_id).toBeTruthy();
    expect(resumeOf(runs[1]!)).toBe(step.session_id);
    expect(resumeOf(runs[2]!)).toBe(step.session_id);
    expect(r.stdout + r.stderr).toContain('iteration 2 of 5');
    const shown = await runVigil(project, ['runs', lastRun(project).id]);
    expect(shown.stdout).toContain('loop until build_command passing: 3 of at most 5 iterations, stopped: build_command passing held after 3 iterations');
    expect(shown.stdout).toMatch(/ {2}3\. succeeded\s+build passed\s+15 tokens/);
  });

  it('stops at max_iterations and fails the step, saying so', async () => {
    project = makeProject();
    project.recipe({
      name: 'never',
      canary: false,
      steps: [{ label: 'fix', prompt: 'Make the build pass.', build_command: 'exit 1', loop: { until: { build: true }, max_iterations: 2 } }],
    });
    const r = await runVigil(project, ['sequence', 'never']);
    expect(r.code).toBe(1);
    const run = lastRun(project);
    const step = stepOf(run, 'fix');
    expect(run.status).toBe('failed');
    expect(step.status).toBe('failed');
    expect(step.reason).toBe('loop: max_iterations (2) reached without build_command passing');
    expect(step.loop?.stopped).toBe('max_iterations (2)');
    expect(step.loop?.iterations).toHaveLength(2);
    expect(claudeRuns(project, 'fix')).toHaveLength(2);
  });

  it('a budget applies across iterations: the iteration that crosses it is the last', async () => {
    project = makeProject();
    project.recipe({
      name: 'capped',
      canary: false,
      steps: [{ label: 'fix', prompt: 'Make the build pass.', build_command: 'exit 1', budget: { tokens: 20 }, loop: { until: { build: true }, max_iterations: 5 } }],
    });
    const r = await runVigil(project, ['sequence', 'capped']);
    expect(r.code).not.toBe(0);
    const step = stepOf(lastRun(project), 'fix');
    expect(step).toMatchObject({ status: 'killed', killed_by: 'budget' });
    expect(step.loop?.iterations).toHaveLength(2);
    expect(step.loop?.stopped).toMatch(/^budget reached: step "fix" of run \S+ used \d+ tokens of 20 tokens/);
    expect(claudeRuns(project, 'fix')).toHaveLength(2);
  });

  it('ends on the completion line only when the agent says it as a whole line, not when it echoes the prompt holding it', async () => {
    project = makeProject();
    project.recipe({
      name: 'line',
      canary: false,
      steps: [
        {
          label: 'work',
          // The agent repeats this prompt in its answer each time (ECHO), and says ALL-DONE on a line of its own from its 3rd run.
          prompt: 'When everything is finished, print ALL-DONE on a line of its own. COUNT=count.txt ECHO LINE=ALL-DONE LINE_AT=3',
          loop: { until: { line: 'ALL-DONE' }, max_iterations: 6 },
        },
      ],
    });
    const r = await runVigil(project, ['sequence', 'line']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const step = stepOf(lastRun(project), 'work');
    expect(step.loop?.iteration).toBe(3);
    expect(step.loop?.stopped).toBe('the line "ALL-DONE" held after 3 iterations');
  });

  it('loops until an if: over this iteration\'s output holds', async () => {
    project = makeProject();
    project.recipe({
      name: 'cond',
      canary: false,
      steps: [
        { label: 'work', prompt: 'Go. COUNT=count.txt LINE=tests-green LINE_AT=2', loop: { until: { if: "contains(steps.work.output, 'tests-green')" }, max_iterations: 4 } },
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a step reference, not a template literal
        { label: 'after', prompt: 'Report: ${steps.work.output}' },
      ],
    });
    const r = await runVigil(project, ['sequence', 'cond']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(stepOf(lastRun(project), 'work').loop?.iteration).toBe(2);
    // A later step reads the last iteration's output (its assistant text: "turn 1"); the log keeps them all.
    const after = project.logEntries().find((e) => e.step === 'after');
    expect(after?.prompt).toBe('Report: turn 1');
    const log = readFileSync(join(project.root, '.vigil', 'runs', lastRun(project).id, 'steps', 'work.log'), 'utf8');
    expect(log).toContain('--- iteration 2 of 4 ---');
  });

  it('is refused before the run when until.build has no build_command, by sequence and recipe check alike', async () => {
    project = makeProject();
    project.recipe({ name: 'bad', canary: false, steps: [{ label: 'fix', prompt: 'x', loop: { until: { build: true }, max_iterations: 3 } }] });
    const check = await runVigil(project, ['recipe', 'check', 'bad']);
    expect(check.code).toBe(2);
    expect(check.stdout + check.stderr).toContain('steps[0] ("fix").loop.until.build: the step has no build_command');
    const r = await runVigil(project, ['sequence', 'bad']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('loop.until.build: the step has no build_command');
    expect(claudeRuns(project, 'fix')).toHaveLength(0);
  });
});

describe('sessions', () => {
  it('a retry continues the agent session', async () => {
    project = makeProject();
    project.recipe({ name: 'retry', canary: false, steps: [{ label: 'work', prompt: 'Go. COUNT=count.txt FAIL_BEFORE=2', retry: { attempts: 2 } }] });
    const r = await runVigil(project, ['sequence', 'retry']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const step = stepOf(lastRun(project), 'work');
    const runs = claudeRuns(project, 'work');
    expect(runs).toHaveLength(2);
    expect(resumeOf(runs[0]!)).toBeNull();
    expect(resumeOf(runs[1]!)).toBe(step.session_id);
  });

  it('codex: a retry continues the thread with codex exec resume <thread_id>', async () => {
    project = makeProject({ codex: true });
    project.recipe({ name: 'cx', canary: false, steps: [{ label: 'work', backend: 'codex', permission_mode: 'acceptEdits', prompt: 'Go. COUNT=count.txt FAIL_BEFORE=2', retry: { attempts: 2 } }] });
    const r = await runVigil(project, ['sequence', 'cx']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const step = stepOf(lastRun(project), 'work');
    const runs = project.logEntries().filter((e) => e.agent === 'codex' && e.step === 'work').map((e) => e.argv as string[]);
    expect(runs).toHaveLength(2);
    expect(runs[0]!.slice(0, 2)).toEqual(['exec', '--json']);
    expect(step.session_id).toMatch(/^thread-/);
    expect(runs[1]!.slice(0, 2)).toEqual(['exec', 'resume']);
    expect(runs[1]!.slice(-2)).toEqual([step.session_id, '-']);
    expect(runs[1]!).toContain('sandbox_mode="workspace-write"');
  });

  it('fresh_session: true starts a new session for the retry', async () => {
    project = makeProject();
    project.recipe({ name: 'fresh', canary: false, steps: [{ label: 'work', prompt: 'Go. COUNT=count.txt FAIL_BEFORE=2', retry: { attempts: 2 }, fresh_session: true }] });
    const r = await runVigil(project, ['sequence', 'fresh']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const runs = claudeRuns(project, 'work');
    expect(runs).toHaveLength(2);
    expect(runs.map(resumeOf)).toEqual([null, null]);
  });

  it('a step run again by --resume continues the session it had in the earlier run', async () => {
    project = makeProject();
    project.recipe({ name: 'again', canary: false, steps: [{ label: 'work', prompt: 'Go. COUNT=count.txt FAIL_BEFORE=2' }] });
    expect((await runVigil(project, ['sequence', 'again'])).code).toBe(1);
    const first = lastRun(project);
    const session = stepOf(first, 'work').session_id;
    expect(session).toBeTruthy();
    const r = await runVigil(project, ['sequence', 'again', '--resume', first.id]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const runs = claudeRuns(project, 'work');
    expect(runs).toHaveLength(2);
    expect(resumeOf(runs[1]!)).toBe(session);
  });

  it('waits for the claude usage limit to reset, shows the countdown, then continues the same session', async () => {
    project = makeProject();
    project.recipe({ name: 'limited', canary: false, steps: [{ label: 'work', prompt: 'Go. USAGE_LIMIT=2' }] });
    const vigil = startVigil(project, ['sequence', 'limited']);
    vigil.child.stdin!.end();
    await vigil.waitFor(/waiting for claude usage limit reset at (?:[A-Z][a-z]{2} \d{1,2} )?\d\d:\d\d \(\d+s left\), then continuing its session/);
    const r = await vigil.done;
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const step = stepOf(lastRun(project), 'work');
    expect(step.status).toBe('succeeded');
    expect(step.waiting ?? null).toBeNull();
    const argv = claudeRuns(project, 'work');
    expect(argv).toHaveLength(2);
    expect(resumeOf(argv[0]!)).toBeNull();
    expect(resumeOf(argv[1]!)).toBe(step.session_id);
  });

  it('vigil runs shows the countdown of a step waiting for its usage limit, and the loop of a step', async () => {
    project = makeProject();
    const id = '20261206-150000-abcd';
    const dir = join(project.root, '.vigil', 'runs', id);
    mkdirSync(join(dir, 'steps'), { recursive: true });
    const until = new Date(Date.now() + 42 * 60_000 + 20_000);
    const step = {
      label: 'fix', status: 'running', backend: 'claude', needs: [], wave: null, phase: 1, phases: 0, exit_code: null,
      started: new Date().toISOString(), ended: null, output_file: 'steps/fix.log', output_bytes: 0, prompt_files: [],
      waiting: { for: 'usage_limit', provider: 'claude', until: until.toISOString(), message: 'Claude AI usage limit reached|1' },
      loop: { iteration: 2, max_iterations: 5, until: 'build_command passing', iterations: [{ n: 1, status: 'failed', build: 'failed', usage: { input_tokens: 10, output_tokens: 5, usd: 0.01 }, ended: new Date().toISOString() }] },
    };
    // A run whose runner is alive (this test's process), as `vigil runs` sees one that is waiting.
    const run = { id, recipe: 'fix', recipe_file: 'x', type: 'sequence', status: 'running', pid: process.pid, started: new Date().toISOString(), ended: null, project_root: project.root, workspace: project.root, transfer_mode: 'none', vars: [], resumed_from: null, from_label: null, steps: [step] };
    writeFileSync(join(dir, 'run.json'), JSON.stringify(run));
    // The day is named when the reset falls after midnight (see usage-limit.test.ts).
    const hm = `${until.toDateString() === new Date().toDateString() ? '' : `${until.toLocaleString('en-US', { month: 'short' })} ${until.getDate()} `}${String(until.getHours()).padStart(2, '0')}:${String(until.getMinutes()).padStart(2, '0')}`;
    const list = await runVigil(project, ['runs']);
    expect(list.stdout).toContain(`running     0/1 steps ok  started ${run.started}  waiting for claude usage limit reset at ${hm} (42m left)`);
    const shown = await runVigil(project, ['runs', id]);
    expect(shown.stdout).toContain(`iteration 2/5  waiting for claude usage limit reset at ${hm} (42m left)`);
    expect(shown.stdout).toContain('loop until build_command passing: 1 of at most 5 iterations');
    expect(shown.stdout).toMatch(/1\. failed\s+build failed\s+15 tokens \$0\.01/);
  });

  it('codex: a usage limit that has reset by now continues the same thread at once', async () => {
    project = makeProject({ codex: true });
    project.recipe({ name: 'cxlimit', canary: false, steps: [{ label: 'work', backend: 'codex', prompt: 'Go. USAGE_LIMIT=now' }] });
    const r = await runVigil(project, ['sequence', 'cxlimit']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain("You've hit your usage limit.");
    // The reset named is this minute's start; the wait ends a second after it (RESET_MARGIN_MS), so a limit met in
    // a minute's first second still has that second to wait.
    expect(r.stdout).toMatch(/waiting for codex usage limit reset at (?:[A-Z][a-z]{2} \d{1,2} )?\d\d:\d\d \([01]s left\), then continuing its session/);
    const step = stepOf(lastRun(project), 'work');
    const runs = project.logEntries().filter((e) => e.agent === 'codex' && e.step === 'work').map((e) => e.argv as string[]);
    expect(runs).toHaveLength(2);
    expect(runs[1]!.slice(0, 2)).toEqual(['exec', 'resume']);
    expect(runs[1]!.slice(-2)).toEqual([step.session_id, '-']);
  });

  it('fails at once when the limit resets later than usage_limit_wait allows', async () => {
    project = makeProject();
    project.recipe({ name: 'toolate', canary: false, steps: [{ label: 'work', prompt: 'Go. USAGE_LIMIT=7200', usage_limit_wait: '30m' }] });
    const r = await runVigil(project, ['sequence', 'toolate']);
    expect(r.code).toBe(1);
    const step = stepOf(lastRun(project), 'work');
    expect(step.status).toBe('failed');
    expect(step.reason).toMatch(/^claude usage limit resets at .*, later than usage_limit_wait allows \(30m/);
    expect(claudeRuns(project, 'work')).toHaveLength(1);
  });
});
