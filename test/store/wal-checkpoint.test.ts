// The state file's write-ahead log is copied back into the database by a
// worker thread, so that no commit on the server's thread pays for it.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { invoke, type OperationName } from '../../src/service/operations.ts';
import { MonitorService } from '../../src/service/service.ts';
import { Store } from '../../src/store/store.ts';

let dir: string | undefined;
let service: MonitorService | undefined;
afterEach(() => {
  service?.close();
  service = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function run(name: OperationName, input: Record<string, unknown>, bearer?: string): Promise<any> {
  return (await invoke(service!, name, input, { caller: { bearer } })).body;
}

describe('write-ahead log checkpoints', () => {
  it('keeps the log bounded under steady writes and the observations in the database file, across a reopen', async () => {
    dir = mkdtempSync(join(tmpdir(), 'vigil-wal-'));
    const path = join(dir, 'state.db');
    service = new MonitorService({ store: Store.open({ path }), log: () => {} });
    const owner = (await run('monitors/create', { id: 'wal' })).owner_token;
    const padding = 'x'.repeat(2000);
    let published = 0;
    // About 40 MB of log in 4 s: far past the 1,000 pages after which a checkpoint is due.
    for (let round = 0; round < 40; round++) {
      await Promise.all(Array.from({ length: 500 }, () => run('monitors/publish', { id: 'wal', type: 'test.wal', data: { padding } }, owner)));
      published += 500;
      await new Promise((r) => setTimeout(r, 100));
    }
    const walBytes = statSync(`${path}-wal`).size;
    const dbBytes = statSync(path).size;
    expect(walBytes).toBeLessThan(24 * 2 ** 20);
    expect(dbBytes).toBeGreaterThan(16 * 2 ** 20);
    service.close();
    service = new MonitorService({ store: Store.open({ path }), log: () => {} });
    const state = await run('monitors/state', { id: 'wal' }, owner);
    expect(state.counters.observations).toBe(published);
  });

  it('restarts the log under writes in every turn, which never leave it fully copied back', async () => {
    dir = mkdtempSync(join(tmpdir(), 'vigil-wal-'));
    const path = join(dir, 'state.db');
    // Restarted at 4 MB instead of 64, so that a few seconds of writes show it.
    service = new MonitorService({ store: Store.open({ path, walRestartBytes: 4 * 2 ** 20 }), log: () => {} });
    const owner = (await run('monitors/create', { id: 'wal' })).owner_token;
    const padding = 'x'.repeat(2000);
    // Batches back to back, no pause: before, the log kept all of it (1.2 GB after 8 s on a 2-core machine).
    // Each restart is seen as the file cut back to the restart size (journal_size_limit).
    let restarts = 0;
    let previous = 0;
    for (let written = 0; written < 100 * 2 ** 20; written += 200 * padding.length) {
      await Promise.all(Array.from({ length: 200 }, () => run('monitors/publish', { id: 'wal', type: 'test.wal', data: { padding } }, owner)));
      const now = statSync(`${path}-wal`).size;
      if (now < previous) restarts++;
      previous = now;
    }
    expect(restarts).toBeGreaterThanOrEqual(2);
  });
});
