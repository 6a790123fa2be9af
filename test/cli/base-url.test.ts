// Issue 31 point 6: one base URL. A client command finds the server by
// --base, else VIGIL_BASE, else server.base of the project's vigil.yml.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSdkProject, type SdkProject, vigil } from '../sdk/helpers.ts';
import { createMonitor } from '../support/client.ts';
import { type ServerProcess, stablePort, startServerProcess } from '../support/server-process.ts';

let project: SdkProject;
let server: ServerProcess;
beforeAll(async () => {
  project = makeSdkProject();
  server = await startServerProcess();
});
afterAll(async () => {
  await server?.stop();
  project.cleanup();
});

describe('the server a client command talks to', { timeout: 120_000 }, () => {
  it('publish finds it in server.base of vigil.yml, in VIGIL_BASE, and in --base, in that order of strength', async () => {
    const { id, ownerToken } = await createMonitor(server.base, { visibility: 'public' });
    const publish = ['publish', id, '--token', ownerToken, '--type', 'demo.base'];
    const nowhere = `http://127.0.0.1:${await stablePort()}`;

    project.file('vigil.yml', `server:\n  base: ${server.url}\n`);
    const fromFile = await vigil(project, publish);
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(fromFile.stdout).toBe(`published ${id} seq 2\n`);

    // The environment wins over the file; the flag wins over both.
    const envWins = await vigil(project, publish, { env: { VIGIL_BASE: nowhere } });
    expect(envWins.code).toBe(3);
    expect(envWins.stderr).toContain(`cannot reach ${nowhere}/mp/v0`);
    const flagWins = await vigil(project, [...publish, '--base', server.url], { env: { VIGIL_BASE: nowhere } });
    expect(flagWins.code, flagWins.stderr).toBe(0);

    rmSync(join(project.root, 'vigil.yml'));
    const fromEnv = await vigil(project, publish, { env: { VIGIL_BASE: server.url } });
    expect(fromEnv.code, fromEnv.stderr).toBe(0);
  });

  it('health checks the server of --base, of VIGIL_BASE or of vigil.yml', async () => {
    const byFlag = await vigil(project, ['health', '--json', '--base', `${server.url}/mp/v0/discover`]);
    const said = new RegExp(`^vigil \\S+ at ${server.url.replaceAll('.', '\\.')} \\(discover answered in \\d+ ms\\)$`);
    expect(JSON.parse(byFlag.stdout).components.server).toEqual({ ok: true, detail: expect.stringMatching(said) });
    const byEnv = await vigil(project, ['health', '--json'], { env: { VIGIL_BASE: `${server.url}/mp/v0` } });
    expect(JSON.parse(byEnv.stdout).components.server.detail).toMatch(said);
    // Something that answers, but not as a Vigil server, is not "ok" (it once read "ok … answered HTTP 404").
    const wrong = await vigil(project, ['health', '--base', `${server.url}/elsewhere`]);
    expect(wrong.stdout).toMatch(new RegExp(`warn +server +${server.url.replaceAll('.', '\\.')}/elsewhere/mp/v0/discover answered HTTP 404: not a Vigil server`));
    // Reported, not required: a warning, and the command still succeeds (a line reading FAIL did, confusingly).
    expect(wrong.code, wrong.stderr).toBe(0);
  });

  it('the cloud commands take --base over api_url', async () => {
    project.file('vigil.yml', 'api_url: http://127.0.0.1:1\n');
    expect((await vigil(project, ['vault', 'set', 'api_key', '--scope', 'api'], { stdin: 'vk_not-a-real-key' })).code).toBe(0);
    const unreachable = await vigil(project, ['webhook', 'list']);
    expect(unreachable.stderr).toContain('127.0.0.1:1');
    // With --base it reaches that server, which refuses the made-up key.
    const r = await vigil(project, ['webhook', 'list', '--base', server.url]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/UNAUTHORIZED/);
    expect(r.stderr).not.toContain('127.0.0.1:1');
  });

  it('every client command lists --base in its help', async () => {
    for (const command of ['publish', 'watch', 'api-key', 'webhook', 'worker', 'health', 'notify', 'daemon', 'temporal', 'sequence', 'script', 'conform', 'mcp']) {
      const help = await vigil(project, [command, '--help']);
      expect(help.stdout, command).toContain('--base <');
    }
  });
});
