// file and log sources never read past --source-root through a symbolic
// link: a log swapped for a link to a file outside after the monitor was
// made publishes none of its lines (and says why), and a file source's glob
// neither walks into a linked folder outside nor hashes a linked file there.
import { appendFileSync, linkSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/server-process.ts';
import { eventually, type SourceServer, sourceServer, watchedMonitor, writtenAtLeast } from './helpers.ts';

let vigil: SourceServer;
let root: string;
let outside: string;
beforeAll(async () => {
  root = tempDir('vigil-sources-root-');
  outside = tempDir('vigil-sources-outside-');
  vigil = await sourceServer({ kinds: ['file', 'log'], root });
});
afterAll(async () => {
  await vigil.close();
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

const sourceError = (id: string) => {
  const sources = vigil.server.service.system.sources;
  return sources.isResident(id) ? (sources.get(id)?.getSnapshot().context.lastError ?? null) : null;
};

describe('sources and symbolic links out of the source root', () => {
  it('a log swapped for a link to a file outside is not read, and is followed again once it is a file under the root', async () => {
    const path = join(root, 'app.log');
    const secretFile = join(outside, 'secret.log');
    writeFileSync(secretFile, 'SECRET-OLD\n');
    writeFileSync(path, '');
    const watched = await watchedMonitor(vigil.base, { kind: 'log', path: 'app.log' });
    // The source first reports contact once it opened the file (at its end).
    await eventually(async () => ((await watched.state()).ages.since_last_source_contact_s === null ? undefined : true), 'the log to be opened');
    appendFileSync(path, 'one\n');
    await writtenAtLeast(watched, 1);

    // Rotated, and the new file is a link out of the root.
    renameSync(path, `${path}.1`);
    symlinkSync(secretFile, path);
    appendFileSync(secretFile, 'SECRET-NEW\n');
    const error = await eventually(async () => {
      const e = sourceError(watched.id);
      return e?.includes('outside the source root') ? e : undefined;
    }, 'the source to refuse the link');
    expect(error).toContain('source.path');

    rmSync(path);
    writeFileSync(path, 'two\n');
    const written = await writtenAtLeast(watched, 2, 'the line of the file under the root again');
    expect(written.map((o) => o.data.line)).toEqual(['one', 'two']);
    expect(JSON.stringify(written)).not.toContain('SECRET');
  });

  it('a file source with glob ** publishes nothing found through links out of the root', async () => {
    writeFileSync(join(outside, 'passwords.txt'), 'SECRET');
    mkdirSync(join(outside, 'tree'), { recursive: true });
    writeFileSync(join(outside, 'tree', 'deep.txt'), 'SECRET');
    const dir = join(root, 'watched');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'inside.txt'), 'mine');
    writeFileSync(join(root, 'elsewhere-in-root.txt'), 'also mine');
    symlinkSync(join(outside, 'passwords.txt'), join(dir, 'linked-file.txt'));
    symlinkSync(join(outside, 'tree'), join(dir, 'linked-dir'));
    symlinkSync(join(root, 'elsewhere-in-root.txt'), join(dir, 'linked-inside.txt'));
    const watched = await watchedMonitor(vigil.base, { kind: 'file', path: 'watched', glob: '**' });
    await writtenAtLeast(watched, 2);
    // A file written after the start is seen: when it is, everything found at the start was handled.
    writeFileSync(join(dir, 'later.txt'), 'later');
    const written = await eventually(async () => {
      const all = await watched.written();
      return all.some((o) => o.data.path === 'later.txt') ? all : undefined;
    }, 'the later file');
    expect(written.map((o) => o.data.path).sort()).toEqual(['inside.txt', 'later.txt', 'linked-inside.txt']);

    // A file under the root swapped for a link out of it is let go, and its new target is not hashed.
    rmSync(join(dir, 'inside.txt'));
    symlinkSync(join(outside, 'passwords.txt'), join(dir, 'inside.txt'));
    const after = await eventually(async () => {
      const all = await watched.written();
      return all.some((o) => o.data.path === 'inside.txt' && o.data.event === 'unlink') ? all : undefined;
    }, 'the swapped file to be let go');
    const hashes = after.filter((o) => o.data.path === 'inside.txt').map((o) => o.data.event);
    expect(hashes[0]).toBe('add');
    expect(hashes.slice(1).every((e: string) => e === 'unlink')).toBe(true);
  });

  it('a log that is a hard link to a file outside is not read, nor one linked elsewhere after it was opened (issue 42)', async () => {
    const secretFile = join(outside, 'shadow.log');
    writeFileSync(secretFile, 'SECRET-OLD\n');
    const path = join(root, 'linked.log');
    linkSync(secretFile, path);
    const watched = await watchedMonitor(vigil.base, { kind: 'log', path: 'linked.log' });
    appendFileSync(secretFile, 'SECRET-NEW\n');
    const error = await eventually(async () => {
      const e = sourceError(watched.id);
      return e?.includes('hard links') ? e : undefined;
    }, 'the source to refuse the hard link');
    expect(error).toBe(`source.path: ${path} has 2 hard links; another name of the same file may lie outside the source root ${root}, so it is not read (copy the file, or log to a file of its own)`);

    // Replaced by a file of its own: followed (from its end, as a file the monitor never read); a second name
    // made while it is open stops the reading.
    rmSync(path);
    writeFileSync(path, '');
    const written = await eventually(async () => {
      appendFileSync(path, 'mine\n');
      const all = await watched.written();
      return all.length > 0 ? all : undefined;
    }, 'a line of the file of its own');
    expect(new Set(written.map((o) => o.data.line))).toEqual(new Set(['mine']));
    await eventually(async () => (sourceError(watched.id) === null ? true : undefined), 'the source to report contact again');
    linkSync(path, join(outside, 'second-name.log'));
    appendFileSync(path, 'after the second name\n');
    await eventually(async () => (sourceError(watched.id)?.includes('hard links') ? true : undefined), 'the source to refuse the file once linked');
    expect(JSON.stringify(await watched.written())).not.toMatch(/SECRET|after the second name/);
  });
});
