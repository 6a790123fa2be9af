// Claude Code: --effort where the installed CLI has it, IS_SANDBOX=1 in vm
// steps, and a reason that says why it exited.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bubblewrapFor } from '../support/requirements.ts';
import { lastRun, makeProject, type Project, runVigil, stepOf } from './helpers.ts';

let project: Project;
afterEach(() => project?.cleanup());

const hasBwrap = bubblewrapFor('the VM isolation test');

describe('claude backend flags', () => {
  it('passes effort as --effort when the installed claude has that flag', async () => {
    project = makeProject();
    project.recipe({ name: 'eff', canary: false, steps: [{ label: 'a', args: ['do it'], effort: 'max' }] });
    const r = await runVigil(project, ['sequence', 'eff'], { FAKE_CLAUDE_EFFORT: '1' });
    expect(r.code, r.stderr).toBe(0);
    const call = project.logEntries().find((e) => e.step === 'a')!;
    expect((call.argv as string[]).join(' ')).toContain('--effort max');
    expect(call.thinking).toBeNull();
  });

  it('says why claude exited when it refuses bypassPermissions as root', async () => {
    project = makeProject();
    project.recipe({ name: 'root', canary: false, steps: [{ label: 'a', args: ['do it'], permission_mode: 'bypassPermissions' }] });
    const r = await runVigil(project, ['sequence', 'root'], { FAKE_ROOT: '1' });
    expect(r.code).toBe(1);
    const reason = stepOf(lastRun(project), 'a').reason as string;
    expect(reason).toContain('claude exited with code 1: --dangerously-skip-permissions cannot be used with root/sudo privileges');
    expect(reason).toContain('set "vm": true on the step');
  });

  it.runIf(hasBwrap)('sets IS_SANDBOX=1 for claude in a vm step, so bypassPermissions works as root', async () => {
    project = makeProject();
    project.recipe({ name: 'boxed', canary: false, steps: [{ label: 'a', args: ['do it'], permission_mode: 'bypassPermissions', vm: true }] });
    // Inside the sandbox only the workspace is writable, so the fake logs there.
    const inside = join(project.root, 'fake-log.jsonl');
    const r = await runVigil(project, ['sequence', 'boxed'], { FAKE_ROOT: '1', FAKE_LOG: inside });
    expect(r.code, r.stderr).toBe(0);
    const entries = readFileSync(inside, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(entries.find((e) => e.step === 'a')!.sandbox).toBe('1');
  });
});
