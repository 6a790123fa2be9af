// file and log sources on real files under the source root: files added,
// changed and removed; a log appended to, rotated and truncated.
import { appendFileSync, mkdirSync, renameSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/client.ts';
import { tempDir } from '../support/server-process.ts';
import { type SourceServer, sourceServer, sourceStarted, watchedMonitor, writtenAtLeast } from './helpers.ts';

let vigil: SourceServer;
let root: string;
beforeAll(async () => {
  root = tempDir('vigil-sources-');
  vigil = await sourceServer({ kinds: ['file', 'log'], root });
});
afterAll(() => vigil.close());

describe('file source', () => {
  it('writes add, change and unlink with size and hash, narrowed by a glob', async () => {
    const dir = join(root, 'watched');
    mkdirSync(join(dir, 'sub'), { recursive: true });
    writeFileSync(join(dir, 'before.md'), 'there first');
    const watched = await watchedMonitor(vigil.base, { kind: 'file', path: 'watched', glob: '**/*.md' });
    const [initial] = await writtenAtLeast(watched, 1);
    expect(initial).toMatchObject({ actor: 'source:file', subject: 'before.md', data: { event: 'add', path: 'before.md', size: 11 } });
    writeFileSync(join(dir, 'sub', 'new.md'), 'hello');
    writeFileSync(join(dir, 'ignored.txt'), 'not matched');
    await writtenAtLeast(watched, 2);
    appendFileSync(join(dir, 'sub', 'new.md'), ' world');
    await writtenAtLeast(watched, 3);
    rmSync(join(dir, 'before.md'));
    const written = await writtenAtLeast(watched, 4);
    expect(written.map((o) => [o.data.event, o.data.path, o.data.size ?? null])).toEqual([
      ['add', 'before.md', 11],
      ['add', 'sub/new.md', 5],
      ['change', 'sub/new.md', 11],
      ['unlink', 'before.md', null],
    ]);
    expect(written[2].data.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses a path outside the source root', async () => {
    const reply = await call(vigil.base, 'POST', '/monitors', { body: { source: { kind: 'file', path: '../../etc' } } });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ code: 'INVALID', field: 'source.path' });
    expect(reply.body.error).toContain('--source-root');
  });
});

describe('log source with a path', () => {
  it('writes each new line and survives rotation and truncation', async () => {
    const path = join(root, 'app.log');
    writeFileSync(path, 'old line before the monitor\n');
    const watched = await watchedMonitor(vigil.base, { kind: 'log', path: 'app.log' });
    await sourceStarted(watched);
    appendFileSync(path, 'one\ntwo\n');
    await writtenAtLeast(watched, 2);
    appendFileSync(path, 'three (partial');
    appendFileSync(path, ')\n');
    await writtenAtLeast(watched, 3);
    // Rotation: the old file moves away (one more line lands in it first) and a new one starts.
    appendFileSync(path, 'four, last of the old file\n');
    renameSync(path, `${path}.1`);
    writeFileSync(path, 'five, first of the new file\n');
    await writtenAtLeast(watched, 5);
    // Truncation in place: whether the source reads the empty file before the new line lands or after,
    // the file is now shorter than where it had read to, and it reads again from the start.
    truncateSync(path, 0);
    appendFileSync(path, 'six\n');
    const written = await writtenAtLeast(watched, 6);
    expect(written.map((o) => o.data.line)).toEqual(['one', 'two', 'three (partial)', 'four, last of the old file', 'five, first of the new file', 'six']);
    expect(written[0]).toMatchObject({ actor: 'source:log', type: 'ai.vigil.source.log' });
  });

  it('is a plain publisher log without a path, as before', async () => {
    const reply = await call(vigil.base, 'POST', '/monitors', { body: { source: { kind: 'log' } } });
    expect(reply.status).toBe(201);
    expect(vigil.server.service.system.sources.isResident(reply.body.monitor.id)).toBe(false);
  });
});
