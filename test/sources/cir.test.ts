// cir sources: signals captured into the project's CIR store (by another
// connection, as the CLI or a script would) are written once each when they
// match the monitor's query.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CirStore } from '../../src/cir/store.ts';
import { call } from '../support/client.ts';
import { tempDir } from '../support/server-process.ts';
import { type SourceServer, sourceServer, sourceStarted, watchedMonitor, writtenAtLeast } from './helpers.ts';

let vigil: SourceServer;
let root: string;
let cir: CirStore;
beforeAll(async () => {
  root = tempDir('vigil-cir-');
  vigil = await sourceServer({ kinds: ['cir'], root });
  cir = new CirStore(join(root, '.vigil', 'cir.db'), {});
});
afterAll(async () => {
  await vigil.close();
  cir.close();
});

describe('cir source', () => {
  it('writes each new matching signal once', async () => {
    cir.capture({ body: 'disk almost full on db-0 (before the monitor)', type: 'finding' });
    const watched = await watchedMonitor(vigil.base, { kind: 'cir', query: { type: 'finding', text: 'disk' } });
    await sourceStarted(watched);
    const match = cir.capture({ body: 'Disk full on db-1', type: 'finding', domain: 'ops' });
    cir.capture({ body: 'disk noise of another type', type: 'note' });
    cir.capture({ body: 'cpu high on web-2', type: 'finding' });
    const [written] = await writtenAtLeast(watched, 1);
    expect(written).toMatchObject({ actor: 'source:cir', type: 'ai.vigil.source.cir', subject: match.id, data: { body: 'Disk full on db-1', domain: 'ops' } });
    // A second match, after: once it is written, every poll between the two has passed without writing the first again.
    const later = cir.capture({ body: 'disk full on db-2', type: 'finding' });
    const both = await writtenAtLeast(watched, 2);
    expect(both.map((o) => o.subject)).toEqual([match.id, later.id]);
  });

  it('refuses a store outside the source root and unknown query fields', async () => {
    const outside = await call(vigil.base, 'POST', '/monitors', { body: { source: { kind: 'cir', query: {}, db: '/etc/cir.db' } } });
    expect(outside.body).toMatchObject({ code: 'INVALID', field: 'source.db' });
    const unknown = await call(vigil.base, 'POST', '/monitors', { body: { source: { kind: 'cir', query: { colour: 'red' } } } });
    expect(unknown.body).toMatchObject({ code: 'INVALID', field: 'source.query.colour' });
  });
});
