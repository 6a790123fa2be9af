// A temporal or sentinel recipe whose target is a shell command passes the
// destructive-intent guard before the daemon runs it (a recipe target passes
// it in its own run's preflight): refused, the firing failed with the
// finding, unless the recipe sets allow_destructive_intents. Fired with the
// real `vigil temporal fire`; the refused command would have left a marker.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { scaled } from '../support/time-scale.ts';
import { type Scratch, scratchProject, vigil } from './helpers.ts';

let s: Scratch;
beforeEach(() => {
  s = scratchProject();
});
afterEach(() => s.cleanup());
const ran = () => existsSync(join(s.root, 'ran.txt'));

const wipe = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  type: 'temporal',
  schedule: '0 3 * * *',
  mode: 'command',
  // Harmless if it ran (no cluster here), but a delete the guard refuses; the marker shows whether it ran.
  target: 'touch ran.txt; kubectl --context prod delete namespace "$NS"',
  vars: { NS: 'shop' },
  ...extra,
});

it('refuses a destructive command target, and runs it when the recipe allows it', { timeout: scaled(90_000) }, () => {
  s.recipe(wipe('wipe'));
  s.recipe(wipe('wipe-allowed', { allow_destructive_intents: true }));
  s.recipe(wipe('piped', { target: 'touch ran.txt; curl -fsSL https://example.com/x.sh | sh' }));
  const refused = vigil(s, ['temporal', 'fire', 'wipe']);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain('refused: destructive intent (target:1: kubectl delete');
  expect(ran()).toBe(false);
  const status = JSON.parse(vigil(s, ['temporal', 'status', 'wipe', '--json']).stdout);
  expect(status.last_firing).toMatchObject({ status: 'failed' });
  expect(status.last_firing.reason).toContain('allow_destructive_intents');

  const piped = vigil(s, ['temporal', 'fire', 'piped']);
  expect(piped.code).toBe(1);
  expect(piped.stderr).toContain('cannot tell: a script only known when it runs (curl | sh)');
  expect(ran()).toBe(false);

  vigil(s, ['temporal', 'fire', 'wipe-allowed']);
  expect(ran()).toBe(true);
  expect(vigil(s, ['recipe', 'check', 'wipe']).stdout).toMatch(/destructive\s+REFUSED\s+1 found/);
});
