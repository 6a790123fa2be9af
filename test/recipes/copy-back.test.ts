// transfer_mode mirror and rsync bring back only what the step changed:
// files that a concurrent step created meanwhile survive, and a file both
// changed differently is a reported conflict.
import { readFileSync, rmdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findOnPath } from '../../src/paths/which.ts';
import { lastRun, makeProject, type Project, runVigil, stepOf } from './helpers.ts';
import { scaled } from '../support/time-scale.ts';

let project: Project;
afterEach(() => project?.cleanup());

describe('copy-back of mirror and rsync steps', () => {
  for (const mode of ['mirror', 'rsync'] as const) {
    it.runIf(mode === 'mirror' || findOnPath('rsync') !== null)(`${mode}: a slower step does not erase what a faster one brought back, and a shared file is a conflict`, async () => {
      project = makeProject();
      project.file('old.txt', 'old\n');
      project.recipe({
        name: 'concurrent',
        canary: false,
        transfer_mode: mode,
        steps: [
          { label: 'slow', args: ['SLEEP_MS=4000 WRITE=slow.txt:S WRITE=shared.txt:from_slow'], wave: 1, concurrencySafe: true },
          { label: 'fast', args: ['WRITE=fast.txt:F WRITE=shared.txt:from_fast'], wave: 1, concurrencySafe: true },
        ],
      });
      const r = await runVigil(project, ['sequence', 'concurrent']);
      const run = lastRun(project);
      expect(stepOf(run, 'fast').status).toBe('succeeded');
      // What the fast step brought back is still there after the slow one came back.
      expect(readFileSync(join(project.root, 'fast.txt'), 'utf8')).toBe('F\n');
      expect(readFileSync(join(project.root, 'slow.txt'), 'utf8')).toBe('S\n');
      expect(readFileSync(join(project.root, 'old.txt'), 'utf8')).toBe('old\n');
      // Both wrote shared.txt: the first one back wins, the second reports it.
      expect(readFileSync(join(project.root, 'shared.txt'), 'utf8')).toBe('from fast\n');
      const slow = stepOf(run, 'slow');
      expect(slow.status).toBe('conflict');
      expect(slow.reason).toContain('changed in the workspace while the step ran, and differently by the step: shared.txt');
      expect(r.code).toBe(1);
      // The step's version is kept where the report says.
      const kept = /the step's are in (\S+) \(until the next run\)/.exec(slow.reason ?? '')![1]!;
      expect(readFileSync(join(kept, 'shared.txt'), 'utf8')).toBe('from slow\n');
      rmSync(dirname(kept), { recursive: true, force: true });
      rmdirSync(dirname(dirname(kept)));
      // The shared root too, unless another test's run is using it.
      try {
        rmdirSync(dirname(dirname(dirname(kept))));
      } catch {
        // another test's run still has a copy there
      }
    }, scaled(90_000));
  }
});
