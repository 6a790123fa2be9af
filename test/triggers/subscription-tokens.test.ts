// A sentinel's subscription tokens are kept under the Vigil home, never in
// the project's .vigil/vigil.db (which `git add -A` takes along where no
// .gitignore keeps it out), and a vigil.db an older Vigil wrote them into
// gives them up on first open.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { subscriptionTokensFile } from '../../src/triggers/sentinel/subscription-tokens.ts';
import { TriggerStore, triggerDbPath } from '../../src/triggers/trigger-store.ts';
import { triggerSchemaSql } from '../../src/triggers/trigger-tables.ts';

const token = 'vgs_the-secret-of-this-subscription';
let root: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'vigil-sub-tokens-'));
  mkdirSync(join(root, 'project'));
  vi.stubEnv('VIGIL_HOME', join(root, 'home'));
});
afterEach(() => {
  vi.unstubAllEnvs();
  rmSync(root, { recursive: true, force: true });
});

const project = () => join(root, 'project');

/** Every byte Vigil wrote under the project's .vigil/, as text. */
function projectBytes(): string {
  const dir = join(project(), '.vigil');
  return readdirSync(dir)
    .filter((f) => statSync(join(dir, f)).isFile())
    .map((f) => readFileSync(join(dir, f), 'latin1'))
    .join('\n');
}

const row = { recipe: 'triage', kind: 'watch', base: 'http://127.0.0.1:8130', monitor: 'builds', subscription: 'sub-1', token };

describe('sentinel subscription tokens', () => {
  it('are kept under the Vigil home (0600), not in vigil.db, and read back with the subscription', () => {
    const store = TriggerStore.open(project());
    store.saveSubscription(row);
    expect(store.subscription('triage', 'watch')).toEqual(row);
    expect(projectBytes()).not.toContain(token);
    const file = subscriptionTokensFile(project());
    expect(file.startsWith(join(root, 'home'))).toBe(true);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ 'sub-1': token });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    store.close();
  });

  it('move out of a vigil.db an older Vigil wrote them into, bytes and all', () => {
    mkdirSync(join(project(), '.vigil'));
    const old = new Database(triggerDbPath(project()));
    old.pragma('journal_mode = WAL');
    old.exec(triggerSchemaSql);
    old.prepare('INSERT INTO sentinel_subscriptions (recipe, kind, base, monitor, subscription, token) VALUES (?, ?, ?, ?, ?, ?)').run(row.recipe, row.kind, row.base, row.monitor, row.subscription, row.token);
    old.close();
    expect(projectBytes()).toContain(token);

    const store = TriggerStore.open(project());
    expect(store.subscription('triage', 'watch')).toEqual(row);
    expect(projectBytes()).not.toContain(token);
    store.close();
  });

  it('without its kept token a subscription is not offered: the sentinel subscribes anew with watch.token', () => {
    const store = TriggerStore.open(project());
    store.saveSubscription(row);
    rmSync(subscriptionTokensFile(project()));
    expect(store.subscription('triage', 'watch')).toBeUndefined();
    expect(existsSync(subscriptionTokensFile(project()))).toBe(false);
    store.close();
  });
});
