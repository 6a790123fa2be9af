// PostgreSQL's side of timer ownership (src/cluster/ownership.ts): a batch
// made because a node owns a monitor carries the node's token, and the
// database refuses it, whole, once that token is not the monitor's current,
// unexpired one; a request's batch carries none and is checked by rev alone.
// A write waiting on a row lock another session holds gives up after the
// lock timeout as a lost race, instead of waiting for that session.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterConflictError, FencedOffError } from '../../src/store/cluster-conflict.ts';
import { CapturedBatch } from '../../src/store/postgres/captured-batch.ts';
import { openPostgres, type PgConnection } from '../../src/store/postgres/pg-connection.ts';
import { PgStore } from '../../src/store/postgres/pg-store.ts';
import { createTestDatabase, postgresFor, type TestDatabase } from '../support/postgres.ts';

const unavailable = await postgresFor('the fencing test');

const mkey = 1;
const monitorRow = (name: string) => [mkey, 'm-fenced', 'active', JSON.stringify({ id: 'm-fenced', name }), 'owner-hash', null, '{}'];

describe.skipIf(unavailable !== undefined)('fencing tokens in PostgreSQL', () => {
  let database: TestDatabase;
  let connection: PgConnection;
  let store: PgStore;
  let rev = 0;
  const known = () => new Map([[mkey, rev]]);
  const batch = (name: string, token?: number) => {
    const b = new CapturedBatch();
    b.add('monitor', mkey, monitorRow(name));
    if (token !== undefined) b.add('fence', mkey, [token]);
    return b;
  };
  const write = async (name: string, token?: number) => {
    const revs = await store.commit(batch(name, token), rev === 0 ? new Map() : known(), () => []);
    rev = revs.get(mkey)!;
  };
  const setOwner = (token: number, expiresInMs: number) =>
    connection.pool.query(
      `insert into monitor_owners (mkey, node_id, token, expires_ms) values ($1, 'node-a', $2, (extract(epoch from clock_timestamp()) * 1000)::bigint + $3)
       on conflict (mkey) do update set token = excluded.token, expires_ms = excluded.expires_ms`,
      [mkey, token, expiresInMs],
    );
  const stored = async () => (await connection.pool.query('select definition, rev from monitors where key = $1', [mkey])).rows[0];

  beforeAll(async () => {
    database = await createTestDatabase();
    connection = await openPostgres(database.url, 2);
    store = new PgStore(connection);
    await write('created');
  });
  afterAll(async () => {
    await connection?.close();
    await database?.drop();
  });

  it('stores a write under the current token and refuses one under an older or lapsed token', async () => {
    await setOwner(2, 60_000);
    await write('by the owner', 2);
    expect(await stored()).toMatchObject({ rev: 2, definition: expect.stringContaining('by the owner') });

    // Taken over: token 3 is current, the old owner's write under 2 is refused and nothing of it is stored.
    await setOwner(3, 60_000);
    await expect(store.commit(batch('stale owner', 2), known(), () => [])).rejects.toBeInstanceOf(FencedOffError);
    // The lease lapsed without a takeover: refused as well.
    await setOwner(3, -1);
    await expect(store.commit(batch('lapsed owner', 3), known(), () => [])).rejects.toMatchObject({ fenced: [mkey] });
    expect(await stored()).toMatchObject({ rev: 2, definition: expect.stringContaining('by the owner') });

    // A request's write is not fenced by ownership: its rev check alone decides.
    await write('a request');
    expect(await stored()).toMatchObject({ rev: 3, definition: expect.stringContaining('a request') });
  });

  it('gives up on a row lock held by a stalled session as a lost race', async () => {
    const stalled = new pg.Client({ connectionString: database.url });
    await stalled.connect();
    try {
      await stalled.query('begin');
      await stalled.query('select 1 from monitors where key = $1 for update', [mkey]);
      const refused = await store.commit(batch('behind a lock'), known(), () => []).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ClusterConflictError);
      expect((refused as Error).message).toMatch(/lock timeout/);
    } finally {
      await stalled.end();
    }
    expect(await stored()).toMatchObject({ rev: 3 });
  });
});
