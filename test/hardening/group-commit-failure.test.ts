// After a failed commit the service's memory is ahead of the file; the group
// commit must then store nothing more (a later batch would leave seqs that
// were never stored), and report SQLite's own error, not the failed rollback.
import { describe, expect, it } from 'vitest';
import { GroupCommit } from '../../src/store/group-commit.ts';
import type { SqlDriver } from '../../src/store/sql-driver.ts';

function fakeDriver() {
  const executed: string[] = [];
  let inTransaction = false;
  const driver: SqlDriver = {
    name: 'better-sqlite3',
    exec(sql) {
      if (sql === 'ROLLBACK' && !inTransaction) throw new Error('cannot rollback - no transaction is active');
      if (sql === 'BEGIN IMMEDIATE') inTransaction = true;
      if (sql === 'COMMIT' || sql === 'ROLLBACK') inTransaction = false;
      executed.push(sql);
    },
    // The group commit prepares its BEGIN and COMMIT once; running them is executing them.
    prepare: (sql) => ({
      run: () => {
        driver.exec(sql);
        return { changes: 0 };
      },
      all: () => {
        throw new Error('not used');
      },
      get: () => {
        throw new Error('not used');
      },
    }),
    close() {},
  };
  return { driver, executed, abort: () => (inTransaction = false) };
}

describe('group commit after a failure', () => {
  it('reports the write error, tells its listeners once, and commits nothing afterwards', async () => {
    const { driver, executed, abort } = fakeDriver();
    const commits = new GroupCommit(driver);
    const failures: unknown[] = [];
    commits.on('failed', (error) => failures.push(error));
    const stored: string[] = [];

    commits.append(() => {
      abort(); // SQLite rolls back by itself on SQLITE_FULL
      throw new Error('database or disk is full');
    });
    await expect(commits.settled()).rejects.toThrow('database or disk is full');
    expect(failures).toHaveLength(1);

    commits.append(() => stored.push('later'));
    commits.put('row', () => stored.push('row'));
    await expect(commits.settled()).rejects.toThrow('database or disk is full');
    await new Promise((done) => setImmediate(done));
    expect(stored).toEqual([]);
    expect(executed.filter((sql) => sql === 'BEGIN IMMEDIATE')).toHaveLength(1);
    expect(failures).toHaveLength(1);
  });
});
