// Publishing a run to a Vigil server: runs the real `vigil serve` on a free
// loopback port and follows the `recipes` monitor the runner creates.
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEntry, lastRun, makeProject, type Project, runsOf, runVigil, startVigil } from './helpers.ts';
import { serverCacheFile } from '../../src/recipes/publish/run-monitor.ts';
import { spawnChild } from '../support/children.ts';
import { stablePort, startRestartableServer, startServerProcess, tempDir } from '../support/server-process.ts';

let server: ChildProcess;
let base = '';

beforeAll(async () => {
  server = spawnChild(process.execPath, [cliEntry, 'serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  base = await new Promise<string>((resolve, reject) => {
    let out = '';
    const onData = (c: Buffer) => {
      out += c.toString();
      const m = out.match(/(http:\/\/127\.0\.0\.1:\d+)\/mp\/v0/);
      if (m) resolve(m[1]!);
    };
    server.stdout!.on('data', onData);
    server.stderr!.on('data', onData);
    server.on('exit', () => reject(new Error(`vigil serve exited: ${out}`)));
  });
});
afterAll(() => {
  server.kill('SIGTERM');
});

describe('publishing runs to a Vigil server', () => {
  let project: Project;
  afterAll(() => project?.cleanup());

  it('creates a recipes monitor and publishes the run and every step state change to it', async () => {
    project = makeProject();
    project.yml(`server:\n  base: ${base}\n`);
    project.recipe({ name: 'watched', canary: false, steps: [{ label: 'a', args: ['x'] }, { label: 'b', args: ['y'] }] });
    const r = await runVigil(project, ['sequence', 'watched']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('cannot publish');
    // The tokens are kept under the user's Vigil home, never in the project.
    const cacheFile = serverCacheFile(project.root, { VIGIL_HOME: join(project.home, '.vigil') });
    expect(existsSync(join(project.root, '.vigil', 'server-monitors.json'))).toBe(false);
    const cache = JSON.parse(readFileSync(cacheFile, 'utf8')) as Record<string, { id: string; owner_token: string; watch: { subscription: string; token: string } }>;
    const { id, owner_token, watch } = Object.values(cache)[0]!;
    expect(statSync(cacheFile).mode & 0o077).toBe(0); // it holds tokens
    expect(r.stdout).toContain(`publishing to monitor ${id}`);
    expect(r.stdout).toContain(`follow with: vigil watch --base ${base} --subscription ${watch.subscription} --token <watch.token in ${cacheFile}>`);
    const monitor = (await (await fetch(`${base}/mp/v0/monitors/${id}`, { headers: { authorization: `Bearer ${owner_token}` } })).json()) as {
      monitor?: { name: string };
      name?: string;
    };
    // Named by its project, so that two projects' run monitors are told apart.
    expect(monitor.monitor?.name ?? monitor.name).toBe(`recipes of ${basename(project.root)}`);
    expect(id).toMatch(/^recipes-vigil-recipes-[a-z0-9]+-[0-9a-f]{8}$/);

    const page = (await (
      await fetch(`${base}/mp/v0/subscriptions/${watch.subscription}/pull?limit=100`, { headers: { authorization: `Bearer ${watch.token}` } })
    ).json()) as { observations: Array<{ type: string; subject: string | null; actor: string; data: { status?: string; started?: string; ended?: string | null } }> };
    const runId = lastRun(project).id;
    const steps = page.observations.filter((o) => o.type === 'ai.vigil.recipe.step');
    expect(steps.map((o) => `${o.subject}:${o.data.status}`)).toEqual([`${runId}/a:running`, `${runId}/a:succeeded`, `${runId}/b:running`, `${runId}/b:succeeded`]);
    expect(steps[1]!.data.ended).toMatch(/^\d{4}-/);
    const runs = page.observations.filter((o) => o.type === 'ai.vigil.recipe.run');
    expect(runs.map((o) => o.data.status)).toEqual(['running', 'succeeded']);
    // The run's own times, as `vigil runs` reads them.
    expect(runs.map((o) => [o.data.started, o.data.ended])).toEqual([
      [lastRun(project).started, null],
      [lastRun(project).started, lastRun(project).ended],
    ]);
    // Each observation names who acted: the run, or the step of it.
    expect(runs.map((o) => o.actor)).toEqual([`agent:vigil-run/${runId}`, `agent:vigil-run/${runId}`]);
    expect([...new Set(steps.map((o) => o.actor))]).toEqual([`agent:vigil-run/${runId}/a`, `agent:vigil-run/${runId}/b`]);

    // The way a person follows it: `vigil watch` with the subscription the runner made.
    const watched = await runVigil(project, ['watch', '--base', base, '--subscription', watch.subscription, '--token', watch.token, '--catch-up', '--once']);
    expect(watched.code, watched.stderr).toBe(0);
    expect(watched.stdout).toContain(`ai.vigil.recipe.step ${runId}/b`);
    expect(watched.stdout).toContain('"status":"succeeded"');

    // A second run publishes to the same monitor, and the watcher's subscription stays valid.
    const again = await runVigil(project, ['sequence', 'watched']);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(readFileSync(cacheFile, 'utf8'))).toEqual(cache);
  });

  it('goes on publishing when its server restarts without its state mid-run: the monitor is made again and the rest of the run lands there', async () => {
    const restartable = await startRestartableServer();
    const p = makeProject();
    try {
      p.yml(`server:\n  base: ${restartable.url}\n`);
      // The first step waits for the test's go, the second runs at once.
      p.recipe({ name: 'held', canary: false, steps: [{ label: 'wait', backend: 'shell', prompt: 'while [ ! -f go ]; do sleep 0.05; done' }, { label: 'then', backend: 'shell', prompt: 'true' }] });
      const run = startVigil(p, ['sequence', 'held']);
      run.child.stdin!.end();
      await run.waitFor(/wait: running/, 30_000);
      await restartable.restart();
      writeFileSync(join(p.root, 'go'), '');
      const r = await run.done;
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stderr).toMatch(/the server no longer has monitor \S+ \(restarted without its state\?\): publishing to \S+, made again/);
      // The new server holds the rest of the run, from the first step's end on.
      const cache = JSON.parse(readFileSync(serverCacheFile(p.root, { VIGIL_HOME: join(p.home, '.vigil') }), 'utf8')) as Record<string, { watch: { subscription: string; token: string } }>;
      const { watch } = Object.values(cache)[0]!;
      const page = (await (await fetch(`${restartable.url}/mp/v0/subscriptions/${watch.subscription}/pull?limit=100`, { headers: { authorization: `Bearer ${watch.token}` } })).json()) as {
        observations: Array<{ type: string; subject: string | null; data: { status?: string } }>;
      };
      const runId = lastRun(p).id;
      const seen = page.observations.filter((o) => o.type.startsWith('ai.vigil.recipe.')).map((o) => `${o.subject}:${o.data.status}`);
      // (What was published while the server was down is there too, once: it was queued and sent when it was back.)
      expect(seen.slice(-4)).toEqual([`${runId}/wait:succeeded`, `${runId}/then:running`, `${runId}/then:succeeded`, `${runId}:succeeded`]);
      expect(new Set(seen).size).toBe(seen.length);
      expect(r.stderr).not.toContain('not published');
    } finally {
      p.cleanup();
      await restartable.kill();
    }
  });

  it('a run that ends while its server is away is kept, and the next run of the project publishes it first once the server is back', async () => {
    const state = join(tempDir('vigil-publish-'), 'server.db');
    const port = await stablePort();
    let durable = await startServerProcess({ state, port });
    const p = makeProject();
    try {
      p.yml(`server:\n  base: ${durable.url}\n`);
      p.recipe({ name: 'one', canary: false, steps: [{ label: 'go', backend: 'shell', prompt: 'true' }] });
      expect((await runVigil(p, ['sequence', 'one'])).code).toBe(0);
      await durable.kill();
      const away = await runVigil(p, ['sequence', 'one']);
      expect(away.code, away.stdout + away.stderr).toBe(0);
      const missed = lastRun(p).id;
      const kept = join(p.home, '.vigil', 'projects');
      expect(away.stderr).toMatch(new RegExp(`observations were not published: the server was away; kept in ${kept}/\\S+/unpublished\\.jsonl for the next run or daemon of this project that reaches ${durable.url}`));
      durable = await startServerProcess({ state, port });
      const back = await runVigil(p, ['sequence', 'one']);
      expect(back.code, back.stdout + back.stderr).toBe(0);
      expect(back.stderr).toMatch(/vigil: \d+ observations that earlier runs of this project could not publish go out first/);
      expect(back.stderr).not.toContain('not published');
      const cache = JSON.parse(readFileSync(serverCacheFile(p.root, { VIGIL_HOME: join(p.home, '.vigil') }), 'utf8')) as Record<string, { watch: { subscription: string; token: string } }>;
      const { watch } = Object.values(cache)[0]!;
      const page = (await (await fetch(`${durable.url}/mp/v0/subscriptions/${watch.subscription}/pull?limit=100`, { headers: { authorization: `Bearer ${watch.token}` } })).json()) as {
        observations: Array<{ type: string; subject: string | null; data: { status?: string } }>;
      };
      const ends = page.observations.filter((o) => o.type === 'ai.vigil.recipe.run' && o.data.status !== 'running').map((o) => o.subject);
      // The run that ended in the outage is on the server, once, before the run that published it.
      expect(ends).toEqual([runsOf(p)[0]!.id, missed, lastRun(p).id]);
      expect(readdirSync(join(kept, readdirSync(kept)[0]!)).filter((f) => f.startsWith('unpublished'))).toEqual([]);
    } finally {
      p.cleanup();
      await durable.kill();
    }
  });

  it('runs of a project started at once on a new server all publish to one monitor', async () => {
    const p = makeProject();
    try {
      p.yml(`server:\n  base: ${base}\n`);
      p.recipe({ name: 'one', canary: false, steps: [{ label: 'go', backend: 'shell', prompt: 'true' }] });
      const results = await Promise.all([1, 2, 3, 4, 5].map(() => runVigil(p, ['sequence', 'one'])));
      for (const r of results) expect(r.code, r.stderr).toBe(0);
      const monitors = new Set(results.map((r) => /publishing to monitor (\S+)/.exec(r.stdout)?.[1]));
      // Before, each made a monitor of its own (the ids of all but one suffixed), and four published where nobody watched.
      expect([...monitors]).toHaveLength(1);
      const cache = JSON.parse(readFileSync(serverCacheFile(p.root, { VIGIL_HOME: join(p.home, '.vigil') }), 'utf8')) as Record<string, { id: string; watch: { subscription: string; token: string } }>;
      const [{ id, watch }] = Object.values(cache) as [{ id: string; watch: { subscription: string; token: string } }];
      expect([...monitors]).toEqual([id]);
      const page = (await (await fetch(`${base}/mp/v0/subscriptions/${watch.subscription}/pull?limit=100`, { headers: { authorization: `Bearer ${watch.token}` } })).json()) as {
        observations: Array<{ type: string; subject: string | null; data: { status?: string } }>;
      };
      const ended = page.observations.filter((o) => o.type === 'ai.vigil.recipe.run' && o.data.status === 'succeeded').map((o) => o.subject);
      expect(ended.sort()).toEqual(runsOf(p).map((r) => r.id).sort());
    } finally {
      p.cleanup();
    }
  });

  it('a project that published before its monitor was named by project keeps that monitor, now named', async () => {
    const older = makeProject();
    try {
      older.yml(`server:\n  base: ${base}\n`);
      older.recipe({ name: 'watched', canary: false, steps: [{ label: 'a', args: ['x'] }] });
      // As the runner made it before: id recipes-<hash>, name "recipes", cached under that id.
      const hash = createHash('sha256').update(older.root).digest('hex').slice(0, 8);
      const made = (await (
        await fetch(`${base}/mp/v0/monitors`, { method: 'POST', body: JSON.stringify({ id: `recipes-${hash}`, name: 'recipes', types: ['ai.vigil.recipe.run', 'ai.vigil.recipe.step'] }) })
      ).json()) as { owner_token: string };
      older.file('.vigil/server-monitors.json', JSON.stringify({ [`${base}#recipes-${hash}`]: { id: `recipes-${hash}`, owner_token: made.owner_token } }));
      const r = await runVigil(older, ['sequence', 'watched']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(`publishing to monitor recipes-${hash} `);
      // The cache an older Vigil wrote in the project moved to the Vigil home, once, and left the project.
      const moved = serverCacheFile(older.root, { VIGIL_HOME: join(older.home, '.vigil') });
      expect(r.stderr).toContain(`moved the server tokens from .vigil/server-monitors.json to ${moved}`);
      expect(existsSync(join(older.root, '.vigil', 'server-monitors.json'))).toBe(false);
      expect(JSON.parse(readFileSync(moved, 'utf8'))[`${base}#recipes-${hash}`].owner_token).toBe(made.owner_token);
      const monitor = (await (await fetch(`${base}/mp/v0/monitors/recipes-${hash}`, { headers: { authorization: `Bearer ${made.owner_token}` } })).json()) as { name: string };
      expect(monitor.name).toBe(`recipes of ${basename(older.root)}`);
    } finally {
      older.cleanup();
    }
  });

  it('a run with a server leaves no token in the working tree: git add -A picks none up', async () => {
    const app = tempDir('vigil-app-');
    const home = tempDir('vigil-home-');
    const runner = makeProject(); // its PATH and fake agents; the run itself is in app
    try {
      const env = { VIGIL_HOME: home };
      const init = await runVigil(runner, ['init'], env, app);
      expect(init.code, init.stderr).toBe(0);
      expect(init.stdout).toContain('wrote .vigil/.gitignore');
      writeFileSync(join(app, 'vigil.yml'), `${readFileSync(join(app, 'vigil.yml'), 'utf8')}server:\n  base: ${base}\n`);
      const git = (...args: string[]) => execFileSync('git', args, { cwd: app, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } });
      git('init', '-q', '-b', 'main');
      git('add', '-A');
      git('commit', '-qm', 'start');
      const r = await runVigil(runner, ['sequence', 'hello'], env, app);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('publishing to monitor');
      const cache = JSON.parse(readFileSync(serverCacheFile(app, env), 'utf8')) as Record<string, { owner_token: string; watch: { token: string } }>;
      const tokens = Object.values(cache).flatMap((e) => [e.owner_token, e.watch.token]);
      expect(tokens).toHaveLength(2);

      git('add', '-A');
      const staged = git('diff', '--cached', '--name-only').split('\n').filter(Boolean);
      expect(staged).toContain('greetings/world.txt'); // the run's own work is there to commit
      expect(staged.filter((f) => f.startsWith('.vigil/'))).toEqual([]);
      // Not one file of the tree, ignored ones included, holds a token.
      const holders = filesUnder(app).filter((f) => tokens.some((t) => readFileSync(f, 'latin1').includes(t)));
      expect(holders).toEqual([]);
    } finally {
      runner.cleanup();
    }
  });
});

/** Every file under dir, .git's objects aside (compressed: a token could not be read there anyway). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .filter((f) => !f.includes('/.git/objects/'));
}
