// Through `vigil serve` as a user starts it: the opt-in flags for shell
// sources, and a restart that resumes every source where it left off
// (log position, file hashes, feed ids, last HTTP answer) without writing
// anything twice.
import { spawnSync } from 'node:child_process';
import { appendFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call } from '../support/client.ts';
import { repoRoot, type ServerProcess, stablePort, startServerProcess, tempDir, vigilArgs } from '../support/server-process.ts';
import { eventually, sourceStarted, watchedMonitor, writtenAtLeast } from './helpers.ts';

const servers: ServerProcess[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop();
});

describe('shell sources are opt-in', () => {
  it('refuses --allow-shell-sources without --allow-admin, and unknown kinds (exit 2)', () => {
    const noAdmin = spawnSync(process.execPath, vigilArgs(['serve', '--port', '0', '--allow-shell-sources']), { cwd: repoRoot, encoding: 'utf8', timeout: 30_000 });
    expect(noAdmin.status).toBe(2);
    expect(noAdmin.stderr).toContain('--allow-admin');
    const unknown = spawnSync(process.execPath, vigilArgs(['serve', '--port', '0', '--sources', 'http,telepathy']), { cwd: repoRoot, encoding: 'utf8', timeout: 30_000 });
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('--sources');
  });

  it('runs a shell command only for a monitor created with the admin token', async () => {
    const root = tempDir('vigil-shell-');
    writeFileSync(join(root, 'lines.txt'), 'alpha\nbeta\n');
    const admin = 'vga_shell_test_admin_token_0123456789';
    const server = await startServerProcess({ transport: 'node', args: ['--allow-shell-sources', '--allow-admin', admin, '--source-root', root] });
    servers.push(server);
    const source = { kind: 'shell', command: 'cat lines.txt', interval_s: 1, emit: 'lines' };
    const anonymous = await call(server.base, 'POST', '/monitors', { body: { source } });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.field).toBe('source.kind');
    const watched = await watchedMonitor(server.base, source, admin);
    const lines = await writtenAtLeast(watched, 2);
    expect(lines.slice(0, 2).map((o) => o.data.line)).toEqual(['alpha', 'beta']);
    expect(lines[0]).toMatchObject({ actor: 'source:shell', origin: 'system', data: { exit: 0 } });

    const exit = await watchedMonitor(server.base, { kind: 'shell', command: 'test -e flag', interval_s: 1, emit: 'exit' }, admin);
    const [missing] = await writtenAtLeast(exit, 1);
    expect(missing.data.exit).toBe(1);
    writeFileSync(join(root, 'flag'), '');
    const [, present] = await writtenAtLeast(exit, 2);
    expect(present.data).toMatchObject({ exit: 0, previous_exit: 1 });
  });
});

describe('a restart', () => {
  it('resumes log, file, feed and http sources without writing anything twice', async () => {
    const root = tempDir('vigil-restart-');
    const state = join(root, 'state.db');
    let items = ['i1'];
    const polls = new Map<string, number>();
    const morePolls = async (url: string, count: number) => {
      const from = polls.get(url) ?? 0;
      await eventually(async () => ((polls.get(url) ?? 0) >= from + count ? true : undefined), `${count} more polls of ${url}`);
    };
    const counterpart = createServer((req, res) => {
      polls.set(req.url ?? '', (polls.get(req.url ?? '') ?? 0) + 1);
      if (req.url === '/feed.json') {
        res.writeHead(200, { 'content-type': 'application/feed+json' });
        res.end(JSON.stringify({ version: 'https://jsonfeed.org/version/1.1', title: 'f', items: items.map((id) => ({ id, title: id })) }));
      } else res.end('same body');
    });
    await new Promise<void>((d) => counterpart.listen(0, '127.0.0.1', d));
    const target = `http://127.0.0.1:${(counterpart.address() as AddressInfo).port}`;
    writeFileSync(join(root, 'app.log'), '');
    writeFileSync(join(root, 'watched.txt'), 'v1');
    const args = ['--sources', 'log,file,feed,http', '--source-root', root];
    let server = await startServerProcess({ transport: 'node', state, args, port: await stablePort() });
    servers.push(server);
    const log = await watchedMonitor(server.base, { kind: 'log', path: 'app.log' });
    const file = await watchedMonitor(server.base, { kind: 'file', path: 'watched.txt' });
    const feed = await watchedMonitor(server.base, { kind: 'feed', url: `${target}/feed.json`, interval_s: 1 });
    const http = await watchedMonitor(server.base, { kind: 'http', url: `${target}/`, interval_s: 1 });
    await sourceStarted(log);
    appendFileSync(join(root, 'app.log'), 'a\nb\n');
    await writtenAtLeast(log, 2);
    await writtenAtLeast(file, 1);
    await writtenAtLeast(feed, 1);
    await writtenAtLeast(http, 1);
    await server.stop();

    // While it is down: the log grows, the file changes, the feed gains an item.
    appendFileSync(join(root, 'app.log'), 'c\n');
    writeFileSync(join(root, 'watched.txt'), 'v2');
    items = ['i1', 'i2'];
    server = await startServerProcess({ transport: 'node', state, args, port: server.port });
    servers.push(server);
    appendFileSync(join(root, 'app.log'), 'd\n');
    expect((await writtenAtLeast(log, 4)).map((o) => o.data.line)).toEqual(['a', 'b', 'c', 'd']);
    expect((await writtenAtLeast(file, 2)).map((o) => o.data.event)).toEqual(['add', 'change']);
    expect((await writtenAtLeast(feed, 2)).map((o) => o.subject)).toEqual(['i1', 'i2']);
    // A few more polls: the unchanged HTTP answer and the old items are not written again.
    await eventually(async () => ((await http.state()).ages.since_last_source_contact_s !== null ? true : undefined), 'contact after restart');
    await morePolls('/', 2);
    await morePolls('/feed.json', 2);
    // The unchanged answer is not written again. (On a loaded machine a poll may time out, and the
    // source then writes that it is unreachable and, at the next answer, reachable: changes, each once.)
    const answers = (await http.written()).map((o) => [o.data.reachable, o.data.status, o.data.body_sha256].join(' '));
    expect(answers[0]).toBe(`true 200 ${(await http.written())[0].data.body_sha256}`);
    expect(answers.filter((answer, i) => i > 0 && answer === answers[i - 1]), answers.join('\n')).toEqual([]);
    expect(await feed.written()).toHaveLength(2);
    expect(await log.written()).toHaveLength(4);
    expect(await file.written()).toHaveLength(2);
    counterpart.closeAllConnections();
    await new Promise((d) => counterpart.close(d));
  });
});
