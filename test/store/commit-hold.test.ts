// While the checkpoint worker empties the write-ahead log it holds SQLite's write lock: the group
// commit keeps its batches in memory meanwhile (wal-checkpointer.ts), so that no commit waits for
// the lock on the server's thread. Writers wait for the release; nothing is lost or reordered.
import { afterEach, describe, expect, it } from 'vitest';
import { GroupCommit } from '../../src/store/group-commit.ts';
import { openSqlDriver, type SqlDriver } from '../../src/store/sql-driver.ts';
import { turns } from '../support/manual-clock.ts';

let driver: SqlDriver | undefined;
afterEach(() => {
  driver?.close();
  driver = undefined;
});

describe('a held group commit', () => {
  it('commits nothing until released, then everything queued meanwhile, in order, as one batch', async () => {
    driver = openSqlDriver(':memory:', 'better-sqlite3');
    driver.exec('CREATE TABLE t (n INTEGER)');
    const insert = driver.prepare('INSERT INTO t (n) VALUES (?)');
    const rows = () => driver!.prepare('SELECT n FROM t ORDER BY rowid').all<{ n: number }>([]).map((r) => r.n);
    const commits = new GroupCommit(driver);
    let batches = 0;
    commits.on('committed', () => batches++);

    let release!: () => void;
    commits.holdUntil(new Promise<void>((done) => (release = done)));
    let settled = false;
    commits.append(() => insert.run([1]));
    void commits.settled().then(() => (settled = true));
    await turns(3);
    commits.append(() => insert.run([2]));
    await turns(3);
    expect(rows()).toEqual([]);
    expect(settled).toBe(false);

    release();
    await commits.settled();
    expect(rows()).toEqual([1, 2]);
    expect(batches).toBe(1);

    // Released for good: the next write commits at the end of its turn.
    commits.append(() => insert.run([3]));
    await commits.settled();
    expect(rows()).toEqual([1, 2, 3]);
  });

  it('flush (shutdown) commits what is queued even while held', async () => {
    driver = openSqlDriver(':memory:', 'better-sqlite3');
    driver.exec('CREATE TABLE t (n INTEGER)');
    const commits = new GroupCommit(driver);
    commits.holdUntil(new Promise<void>(() => {}));
    commits.append(() => driver!.prepare('INSERT INTO t (n) VALUES (1)').run([]));
    commits.flush();
    await commits.settled();
    expect(driver.prepare('SELECT count(*) AS c FROM t').get<{ c: number }>([])).toEqual({ c: 1 });
  });
});
