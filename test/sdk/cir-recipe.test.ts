// The recipe `cir` block on a real `vigil sequence` run: CIR_CONTEXT before
// each step, SIGNAL lines and the step output captured after it, patterns
// detected at the end.
import { chmodSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { makeSdkProject, type SdkProject, vigil } from './helpers.ts';

// Each test runs the real CLI several times; on a loaded machine one start takes seconds.
vi.setConfig({ testTimeout: 300_000 });

let project: SdkProject;
beforeEach(() => {
  project = makeSdkProject();
});
afterEach(() => project.cleanup());

describe('recipe cir block', () => {
  it('gives each step CIR_CONTEXT, captures its SIGNAL lines and output with the recipe source, and detects patterns at the end', async () => {
    const agent = project.file(
      'agent.sh',
      `#!/bin/sh
cat > /dev/null
echo "context lines: $(grep -c . "$CIR_CONTEXT")"
grep -q "cache is cold" "$CIR_CONTEXT" && echo "SAW-EARLIER-SIGNAL"
echo "SIGNAL finding: the cache is cold"
echo '{"signal": {"type": "metric", "body": "p99 latency 420 ms", "confidence": 0.8}}'
`,
    );
    chmodSync(agent, 0o755);
    project.file('vigil.yml', `providers:\n  sh:\n    type: custom\n    command: ${agent}\n`);
    project.file(
      '.vigil/recipes/probe.json',
      JSON.stringify({
        name: 'probe',
        canary: false,
        cir: { write_after_step: true, detect_patterns_on_complete: true, query_limit: 5, pattern_min_strength: 0.5 },
        steps: [
          { label: 'first', backend: 'sh', args: ['go'], max_phases: 1 },
          { label: 'second', backend: 'sh', args: ['go'], max_phases: 1 },
        ],
      }),
    );
    const r = await vigil(project, ['sequence', 'probe']);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const signals = JSON.parse((await vigil(project, ['cir', 'query', '--json', '--limit', '50'])).stdout) as Array<{ type: string; body: string; source: string }>;
    const findings = signals.filter((s) => s.type === 'finding');
    expect(findings.map((s) => s.source).sort()).toEqual(['recipe:probe/first', 'recipe:probe/second']);
    expect(signals.filter((s) => s.type === 'metric')).toHaveLength(2);
    const outputs = signals.filter((s) => s.type === 'step.output');
    expect(outputs).toHaveLength(2);
    // The second step's context held the first step's signal.
    expect(outputs.find((s) => s.source === 'recipe:probe/second')!.body).toContain('SAW-EARLIER-SIGNAL');
    const stats = JSON.parse((await vigil(project, ['cir', 'stats', '--json'])).stdout);
    expect(stats.patterns).toBeGreaterThanOrEqual(2);
    const runs = join(project.root, '.vigil', 'runs');
    const id = JSON.parse((await vigil(project, ['runs', '--json'])).stdout)[0].id;
    expect(readFileSync(join(runs, id, 'cir-context-second.md'), 'utf8')).toContain('## Patterns');
  });
});
