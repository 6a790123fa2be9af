// A cluster node's replica lives in a private temporary SQLite file, not in
// memory: its page cache is bounded, so a node serving a monitor of a million
// observations holds a few megabytes of them, not all. The file is rebuilt
// from PostgreSQL at every start, so nothing in it needs to survive: it is
// removed when the node closes or the process exits, and the folders of
// nodes that were killed are removed by the next node that starts.
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processAlive } from '../file-lock/process-alive.ts';

const prefix = 'vigil-replica-';

export class ReplicaFile {
  readonly path: string;
  private readonly dir: string;
  private readonly onExit = () => this.remove();

  constructor() {
    sweepAbandoned();
    // mkdtemp makes the folder 0700: only this user reads the replica's rows and token hashes.
    this.dir = mkdtempSync(join(tmpdir(), `${prefix}${process.pid}-`));
    this.path = join(this.dir, 'replica.sqlite');
    process.once('exit', this.onExit);
  }

  /** Removes the folder (the database may still be open: its space is freed when it closes). */
  remove(): void {
    process.removeListener('exit', this.onExit);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Folders left by nodes that were killed (their pid no longer runs), owned by this user. */
function sweepAbandoned(): void {
  let names: string[];
  try {
    names = readdirSync(tmpdir());
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^vigil-replica-(\d+)-/.exec(name)?.[1]);
    if (!pid || pid === process.pid || processAlive(pid)) continue;
    const dir = join(tmpdir(), name);
    try {
      if (statSync(dir).uid !== process.getuid?.()) continue;
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // Gone meanwhile, or not ours to remove.
    }
  }
}

