import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { customProvider, isAlive, lastRun, makeProject, type Project, runVigil, stepOf } from './helpers.ts';

let project: Project;
afterEach(() => project?.cleanup());

describe('watchdogs', () => {
  it('kills a hung agent and its grandchildren at the timeout, keeps the partial output, and says it was the watchdog', async () => {
    project = makeProject();
    const pidfile = join(project.root, 'pids.json');
    project.recipe({
      name: 'hung',
      canary: false,
      steps: [
        { label: 'stuck', args: [`HANG PIDFILE=${pidfile}`], timeout: 3 },
        { label: 'next', args: ['fine'], depends_on: ['stuck'] },
      ],
    });
    const r = await runVigil(project, ['sequence', 'hung']);
    expect(r.code).toBe(1);
    const run = lastRun(project);
    const stuck = stepOf(run, 'stuck');
    expect(stuck.status).toBe('killed');
    expect(stuck.killed_by).toBe('timeout');
    expect(stuck.reason).toContain('timeout');
    expect(stepOf(run, 'next').status).toBe('skipped');
    // The partial output (the one line it printed before hanging) is kept.
    expect(readFileSync(join(project.root, '.vigil', 'runs', run.id, stuck.output_file!), 'utf8')).toContain('working…');
    const pids = JSON.parse(readFileSync(pidfile, 'utf8')) as { agent: number; grandchild: number };
    // It ignores SIGTERM, so only the SIGKILL of the whole group ends it.
    expect(isAlive(pids.agent)).toBe(false);
    expect(isAlive(pids.grandchild)).toBe(false);
  });

  it('kills an agent that prints nothing for longer than the inactivity timeout', async () => {
    project = makeProject();
    customProvider(project, 'inactivity_timeout: 3\n');
    const pidfile = join(project.root, 'pids.json');
    project.recipe({
      name: 'silent',
      canary: false,
      steps: [{ label: 'mute', args: [`SILENT_HANG PIDFILE=${pidfile}`], backend: 'fake', timeout: 120 }],
    });
    const r = await runVigil(project, ['sequence', 'silent']);
    expect(r.code).toBe(1);
    const mute = stepOf(lastRun(project), 'mute');
    expect(mute.status).toBe('killed');
    expect(mute.killed_by).toBe('inactivity');
    const pids = JSON.parse(readFileSync(pidfile, 'utf8')) as { agent: number; grandchild: number };
    expect(isAlive(pids.grandchild)).toBe(false);
  });

  it('applies the inactivity timeout to model providers over HTTP too', async () => {
    const { startFakeModelServer } = await import('../fakes/fake-openai-server.ts');
    const server = await startFakeModelServer();
    try {
      project = makeProject();
      project.yml(`inactivity_timeout: 1\nproviders:\n  local:\n    type: openai\n    base_url: ${server.url}/v1\n    models: [fake-7b]\n`);
      project.recipe({ name: 'http-hang', canary: false, steps: [{ label: 'ask', args: ['HANG'], backend: 'local' }] });
      const r = await runVigil(project, ['sequence', 'http-hang']);
      expect(r.code).toBe(1);
      const ask = stepOf(lastRun(project), 'ask');
      expect(ask.status).toBe('killed');
      expect(ask.killed_by).toBe('inactivity');
    } finally {
      await server.close();
    }
  });
});
