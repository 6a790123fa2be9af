// claude and codex without credentials: the run says so and what to do,
// instead of "claude reported an error (success)" or codex retrying for
// minutes; `vigil health` asks `claude auth status` and `codex login status`.
import { afterEach, describe, expect, it } from 'vitest';
import { lastRun, makeProject, type Project, runVigil, stepOf } from './helpers.ts';

let project: Project;
afterEach(() => project?.cleanup());

describe('agent CLIs that are not logged in', () => {
  it('a claude step says claude is not logged in and how to log it in, not "success"', async () => {
    project = makeProject();
    project.recipe({ name: 'nologin', canary: false, steps: [{ label: 'a', args: ['do it'] }] });
    const r = await runVigil(project, ['sequence', 'nologin'], { FAKE_LOGGED_IN: '0' });
    expect(r.code).toBe(1);
    const reason = stepOf(lastRun(project), 'a').reason as string;
    expect(reason).toContain('claude is not logged in ("Not logged in · Please run /login")');
    expect(reason).toContain('set ANTHROPIC_API_KEY');
    expect(reason).toContain('`auth:` profile in vigil.yml');
    expect(reason).toContain('`claude auth login`');
    expect(reason).not.toContain('(success)');
  });

  it('the canary asks claude auth status and codex login status first, and names what to do; an ANTHROPIC_API_KEY counts', async () => {
    project = makeProject({ codex: true });
    project.recipe({ name: 'two', steps: [{ label: 'plan', args: ['plan it'] }, { label: 'code', args: ['write it'], backend: 'codex', depends_on: ['plan'] }] });
    let r = await runVigil(project, ['sequence', 'two'], { FAKE_LOGGED_IN: '0' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('canary for backend "claude" failed: claude is not logged in: set ANTHROPIC_API_KEY');
    expect(project.logEntries()).toEqual([]);
    // With a key for claude, codex is the one that stops the run.
    r = await runVigil(project, ['sequence', 'two'], { FAKE_LOGGED_IN: '0', ANTHROPIC_API_KEY: 'sk-ant-fake' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('canary for backend "codex" failed: codex is not logged in: run `codex login`');
    expect(r.stderr).toContain('CODEX_API_KEY');
    expect(project.logEntries().filter((e) => e.step === 'plan' || e.step === 'code')).toEqual([]);
  });

  it('vigil health reports claude and codex as not logged in instead of "ok"', async () => {
    project = makeProject({ codex: true });
    let r = await runVigil(project, ['health', '--json'], { FAKE_LOGGED_IN: '0' });
    let backends = (JSON.parse(r.stdout) as { components: { backends: Record<string, { ok: boolean; detail: string }> } }).components.backends;
    expect(backends.claude).toMatchObject({ ok: false });
    expect(backends.claude!.detail).toContain('claude is not logged in: set ANTHROPIC_API_KEY');
    expect(backends.codex).toMatchObject({ ok: false });
    expect(backends.codex!.detail).toContain('codex is not logged in: run `codex login`');
    r = await runVigil(project, ['health', '--json']);
    backends = (JSON.parse(r.stdout) as { components: { backends: Record<string, { ok: boolean; detail: string }> } }).components.backends;
    expect(backends.claude).toMatchObject({ ok: true });
    expect(backends.claude!.detail).toContain('logged in');
    expect(backends.codex).toMatchObject({ ok: true });
    expect(backends.codex!.detail).toContain('Logged in using an API key');
  });
});
