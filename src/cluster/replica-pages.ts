// A monitor a node holds nothing of in memory (its first use here, or after
// the replica budget dropped it) is caught up page by page: its observations
// are stored in the replica as they are read, so that catching up on a
// monitor of a million observations never holds them in memory at once.
//
// The pages land in the replica before the monitor's row does. No reader sees
// them early (a read stops at the head of the monitor memory holds, and there
// is none yet), and no local write can collide with them (a write needs the
// monitor in memory; requests on it wait for this catch-up).
import type { MonitorDelta, PgStore } from '../store/postgres/pg-store.ts';
import type { ReplicaWriter } from './replica-writer.ts';

/** Observations read and stored per page. */
export const catchUpPage = 2000;

export interface PageHooks {
  /** Resolves when no batch holds the replica's transaction open. */
  replicaFree(): Promise<void>;
  /** True once the node stops: a long catch-up ends there rather than hold the close. */
  stopping(): boolean;
}

export async function readDeltaInPages(pg: PgStore, replica: ReplicaWriter, mkey: number, sinceRev: number, hooks: PageHooks): Promise<MonitorDelta | undefined> {
  for (;;) {
    const delta = await pg.delta(mkey, sinceRev, replica.head(mkey), catchUpPage);
    if (!delta?.more) return delta;
    let rows = delta.observations;
    for (;;) {
      if (hooks.stopping()) throw new Error('the server is stopping');
      await hooks.replicaFree();
      replica.storeObservations(rows);
      if (rows.length < catchUpPage) break;
      rows = await pg.observationsAfter(mkey, rows.at(-1)!.seq, catchUpPage);
    }
    // The rest (fewer than a page, unless writers outran the reads) comes with the snapshot's other rows.
  }
}
