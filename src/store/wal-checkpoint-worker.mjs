// The worker thread behind WalCheckpointer (wal-checkpointer.ts): its own
// connection to the state file, which copies the write-ahead log back into the
// database when asked (a passive checkpoint: it never waits for or blocks the
// server's writes). Plain JavaScript: a worker thread does not inherit tsx.
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
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ ok: true, walFrames: result.log, copied: result.checkpointed });
  } catch (error) {
    parentPort.postMessage({ ok: false, error: error instanceof Error ? error.message : String(error) });
  }
});
