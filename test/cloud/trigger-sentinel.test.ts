// Inbound trigger end to end: POST /v1/triggers/<monitor> with an API key
// publishes an observation, and a sentinel recipe on that monitor (run by a
// real `vigil daemon`) reacts with the body's vars, which override the
// recipe's own vars.
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { until } from '../../bench/lib/sentinel-fleet.ts';
import { call, createMonitor } from '../support/client.ts';
import { type ServerProcess, startServerProcess, tempDir } from '../support/server-process.ts';
import { adminToken, makeKey } from './fixtures.ts';
import { spawnChild } from '../support/children.ts';
import { cliEntry as vigilBin } from '../support/cli-entry.ts';

const dir = tempDir('vigil-trigger-');
let server: ServerProcess | undefined;
let daemon: ChildProcess | undefined;

afterAll(async () => {
  if (daemon && daemon.exitCode === null) {
    const exited = new Promise((r) => daemon!.once('exit', r));
    daemon.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    if (daemon.exitCode === null) daemon.kill('SIGKILL');
  }
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('inbound trigger to a sentinel', () => {
  it('a sentinel runs with the trigger body\'s vars', { timeout: 120_000 }, async () => {
    server = await startServerProcess({ args: [`--allow-admin=${adminToken}`] });
    const { id: monitor, ownerToken } = await createMonitor(server.base, { capabilities: ['observe', 'act'] });
    const key = await makeKey(server.url, 'sentinel', [monitor]);
    const root = join(dir, 'project');
    const out = join(dir, 'out.txt');
    mkdirSync(join(root, '.vigil', 'recipes'), { recursive: true });
    writeFileSync(
      join(root, '.vigil', 'recipes', 'on-trigger.json'),
      JSON.stringify({
        name: 'on-trigger',
        type: 'sentinel',
        watch: { monitor, base: server.url, token: ownerToken },
        mode: 'command',
        target: 'printf "%s %s %s" "$BRANCH" "$OBSERVATION_TYPE" "$OBSERVATION_SUBJECT" > "$OUT"',
        vars: { OUT: out, BRANCH: 'from-recipe' },
        notify: 'never',
      }),
    );
    mkdirSync(join(dir, 'home'), { recursive: true });
    daemon = spawnChild(process.execPath, [vigilBin, 'daemon', '--no-publish'], { cwd: root, env: { ...process.env, HOME: join(dir, 'home') }, stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    daemon.stdout!.on('data', (b: Buffer) => (log += b.toString()));
    daemon.stderr!.on('data', (b: Buffer) => (log += b.toString()));
    await until('the sentinel to subscribe', () => log.includes('subscribed to'), 60_000);

    const fired = await call(server.url, 'POST', `/v1/triggers/${monitor}`, { token: key, body: { subject: 'deploy-42', vars: { BRANCH: 'release/1.2' } } });
    expect(fired.status).toBe(201);
    await until('the reaction', () => existsSync(out) && readFileSync(out, 'utf8').length > 0, 60_000).catch((error: Error) => {
      throw new Error(`${error.message}\n${log}`);
    });
    expect(readFileSync(out, 'utf8')).toBe('release/1.2 ai.vigil.trigger deploy-42');
  });
});
