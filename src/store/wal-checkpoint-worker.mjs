// The worker thread behind WalCheckpointer (wal-checkpointer.ts): its own
// connection to the state file, which copies the write-ahead log back into the
// database when asked. 'checkpoint' is a passive checkpoint: it never waits for
// or blocks the server's writes. 'restart' copies what is left and restarts the
// log from its beginning; it holds the write lock meanwhile, so it is asked for only when little
// is left to copy, and gives up at once rather than wait for a reader. Plain
// JavaScript: a worker thread does not inherit tsx.
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';

const Database = createRequire(import.meta.url)('better-sqlite3');
const db = new Database(workerData.path);
db.pragma('busy_timeout = 5000');

parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    if (message === 'restart') {
      // A reader still on the log would make the checkpoint wait with the write lock held: the server's commits would wait too.
      db.pragma('busy_timeout = 20');
      try {
        const [result] = db.pragma('wal_checkpoint(RESTART)');
        parentPort.postMessage({ ok: true, restarted: result.busy === 0 });
      } catch (error) {
        // Busy is not a failure: the server writes on, and the next checkpoint tries again.
        if (error?.code !== 'SQLITE_BUSY') throw error;
        parentPort.postMessage({ ok: true, restarted: false });
      } finally {
        db.pragma('busy_timeout = 5000');
      }
      return;
    }
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ ok: true, walFrames: result.log, copied: result.checkpointed });
  } catch (error) {
    parentPort.postMessage({ ok: false, error: error instanceof Error ? error.message : String(error) });
  }
});
