import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isAlive, lastRun, makeProject, type Project, startVigil, stepOf } from './helpers.ts';

let project: Project;
afterEach(() => project?.cleanup());

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('cancellation', () => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal} cancels every running step, kills their process groups, records them cancelled and exits 130`, async () => {
      project = makeProject();
      const pidfiles = ['a', 'b'].map((l) => join(project.root, `${l}.pids`));
      project.recipe({
        name: 'long',
        canary: false,
        steps: [
          { label: 'a', args: [`HANG PIDFILE=${pidfiles[0]}`], wave: 1, concurrencySafe: true },
          { label: 'b', args: [`HANG PIDFILE=${pidfiles[1]}`], wave: 1, concurrencySafe: true },
          { label: 'c', args: ['later'], wave: 2 },
        ],
      });
      const run = startVigil(project, ['sequence', 'long']);
      await until(() => pidfiles.every((f) => existsSync(f)), 'both agents to start');
      const pids = pidfiles.map((f) => JSON.parse(readFileSync(f, 'utf8')) as { agent: number; grandchild: number });
      run.child.kill(signal);
      const result = await run.done;
      expect(result.code).toBe(130);
      for (const p of pids) {
        expect(isAlive(p.agent)).toBe(false);
        expect(isAlive(p.grandchild)).toBe(false);
      }
      const record = lastRun(project);
      expect(record.status).toBe('cancelled');
      expect(stepOf(record, 'a').status).toBe('cancelled');
      expect(stepOf(record, 'b').status).toBe('cancelled');
      expect(stepOf(record, 'c').status).toBe('cancelled');
      expect(project.logEntries().map((e) => e.step)).not.toContain('c');
    });
  }
});
