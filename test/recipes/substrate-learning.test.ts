import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShProject } from './composite-helpers.ts';
import { type Project, runVigil } from './helpers.ts';

let project: Project;
afterEach(() => project?.cleanup());

describe('a substrate recipe learns from its own repeated findings', () => {
  it('runs three times: the same finding forms a pattern across runs, and the pattern and findings of its domain reach the next context', async () => {
    project = makeShProject({ git: false });
    project.recipe({
      name: 'learn',
      type: 'substrate',
      canary: false,
      cir: { write_after_step: true, detect_patterns_on_complete: true, pattern_min_strength: 0.5 },
      query: { domain: 'incidents', since: '7d' },
      // The agent keeps the context it was given, and reports the same finding every run.
      steps: [{ label: 'review', args: ['cp "$$CIR_CONTEXT" context.md; echo "SIGNAL finding: the disk of db-1 fills up at night"'] }],
    });
    const first = await runVigil(project, ['sequence', 'learn']);
    expect(first.code, first.stderr + first.stdout).toBe(0);
    expect(first.stdout).toContain('pattern detection found 0 pattern(s)');
    expect(readFileSync(join(project.root, 'context.md'), 'utf8')).toContain('## Signals (0)');

    const second = await runVigil(project, ['sequence', 'learn']);
    expect(second.code, second.stderr).toBe(0);
    // The first run's finding carried the query's domain, so the second run's context has it.
    const ctx2 = readFileSync(join(project.root, 'context.md'), 'utf8');
    expect(ctx2).toContain('[finding/incidents] the disk of db-1 fills up at night — recipe:learn/review');
    // Two runs of one step found the same thing: a pattern (distinct runs, not one source).
    expect(second.stdout).toMatch(/pattern detection found [1-9]\d* pattern\(s\)/);

    const third = await runVigil(project, ['sequence', 'learn']);
    expect(third.code, third.stderr).toBe(0);
    const ctx3 = readFileSync(join(project.root, 'context.md'), 'utf8');
    expect(ctx3).toMatch(/## Patterns \([1-9]\d*\)\n(- .*\n)*- \[finding\] the disk of db fills up at night \(strength 0\.50, seen 2 times\)/);
    expect(third.stdout).toMatch(/pattern detection found [1-9]\d* pattern/);
    const patterns = JSON.parse((await runVigil(project, ['cir', 'patterns', '--json'])).stdout) as Array<{ type: string; recurrence_count: number }>;
    expect(patterns.find((p) => p.type === 'finding')?.recurrence_count).toBe(3);
  });
});
