// A substrate recipe run with `vigil sequence`: each step's agent (a small
// script standing in for one) gets CIR_CONTEXT, prints SIGNAL lines, and the
// run captures them, the step output, and detects patterns at the end.
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openCir, closeAllCir } from '../../src/cir/index.ts';
import { type Scratch, scratchProject, vigil } from './helpers.ts';

let s: Scratch;

beforeEach(() => {
  s = scratchProject();
  const agent = join(s.root, 'agent.sh');
  // Copies the context it was given, then reports what it found.
  writeFileSync(
    agent,
    '#!/bin/sh\ncp "$CIR_CONTEXT" "context-$VIGIL_STEP.md"\necho "SIGNAL finding: the auth tests are flaky"\necho \'{"signal": {"type": "decision", "body": "retry flaky tests twice", "confidence": 0.8}}\'\necho "done with $VIGIL_STEP"\n',
  );
  chmodSync(agent, 0o755);
  writeFileSync(join(s.root, 'vigil.yml'), `providers:\n  sh:\n    type: custom\n    command: ${agent}\n`);
});

afterEach(() => {
  closeAllCir();
  s.cleanup();
});

describe('substrate recipes', () => {
  it('gives each step CIR_CONTEXT, captures SIGNAL lines and step output, and detects patterns at the end', { timeout: 120_000 }, async () => {
    const cir = openCir(s.root);
    cir.capture({ type: 'finding', body: 'the deploy needs a migration first', source: 'seed' });
    closeAllCir();
    s.recipe({
      name: 'learn',
      type: 'substrate',
      canary: false,
      cir: { write_after_step: true, detect_patterns_on_complete: true, query_limit: 5, pattern_min_strength: 0 },
      query: { since: '7d' },
      steps: [
        { label: 'first', backend: 'sh', args: [] },
        { label: 'second', backend: 'sh', args: [], depends_on: ['first'] },
      ],
    });
    const out = vigil(s, ['sequence', 'learn']);
    expect(out.code, out.stderr + out.stdout).toBe(0);
    expect(out.stdout).toContain('captured 3 signal(s) from step "first"');
    expect(out.stdout).toMatch(/pattern detection found [1-9]\d* pattern/);
    const first = readFileSync(join(s.root, 'context-first.md'), 'utf8');
    expect(first).toContain('the deploy needs a migration first');
    expect(first).not.toContain('auth tests are flaky');
    // The second step sees what the first one wrote.
    const second = readFileSync(join(s.root, 'context-second.md'), 'utf8');
    expect(second).toContain('[finding] the auth tests are flaky — recipe:learn/first');
    expect(second).toContain('[decision] retry flaky tests twice');
    const store = openCir(s.root);
    const bySource = store.query({ source: 'recipe:learn/second', limit: 10 });
    expect(bySource.map((x) => x.type).sort()).toEqual(['decision', 'finding', 'step.output']);
    expect(store.patterns({ minStrength: 0 }).some((p) => p.body.includes('auth tests are flaky'))).toBe(true);
    const runs = JSON.parse(vigil(s, ['runs', '--json']).stdout);
    expect(runs[0]).toMatchObject({ type: 'substrate', status: 'succeeded' });
  });

  it('refuses an unknown field of a substrate recipe naming it', () => {
    s.recipe({ name: 'bad', type: 'substrate', steps: [{ label: 'a', args: [] }], query: { text: 'x', sinse: '1d' } });
    const out = vigil(s, ['sequence', 'bad']);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('sinse');
  });
});
