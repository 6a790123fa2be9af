// Issue 49 point 4: `vigil publish` says who acted — the command and the user
// who ran it on this machine — instead of the owner's name for every client,
// stays within what the token permits (on a person's monitor it publishes on
// that person's behalf, as before at a person's level), and cannot name a
// person the token does not belong to. Real server processes, the real CLI.
import { hostname, userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSdkProject, type SdkProject, vigil } from '../sdk/helpers.ts';
import { readFeed } from '../http/fixtures.ts';
import { call, createMonitor } from '../support/client.ts';
import { type ServerProcess, startServerProcess } from '../support/server-process.ts';

let project: SdkProject;
beforeAll(() => {
  project = makeSdkProject();
});
afterAll(() => project.cleanup());

const me = `agent:vigil-publish/${userInfo().username.replace(/[^\w.@+-]+/g, '-')}@${hostname().replace(/[^\w.@+-]+/g, '-')}`;

async function lastObservation(server: ServerProcess, monitor: string, token: string) {
  return (await readFeed(server.base, monitor, token)).filter((o) => o.type === 'demo.done').at(-1);
}

describe('vigil publish names who acted', { timeout: 120_000 }, () => {
  it('on an agent-owned monitor: the command and its user, at an agent level', async () => {
    const server = await startServerProcess();
    try {
      const { id, ownerToken } = await createMonitor(server.base, {});
      const r = await vigil(project, ['publish', id, '--base', server.url, '--token', ownerToken, '--type', 'demo.done', '--subject', 'job-1']);
      expect(r.code, r.stderr).toBe(0);
      const o = await lastObservation(server, id, ownerToken);
      expect(o).toMatchObject({ actor: me, origin: 'agent', tier: 'unverified' });
      // --actor still wins, and a person's name it does not hold is refused with a way out.
      const named = await vigil(project, ['publish', id, '--base', server.url, '--token', ownerToken, '--type', 'demo.done', '--actor', 'probe:ci']);
      expect(named.code, named.stderr).toBe(0);
      expect(await lastObservation(server, id, ownerToken)).toMatchObject({ actor: 'probe:ci', origin: 'probe' });
      const person = await vigil(project, ['publish', id, '--base', server.url, '--token', ownerToken, '--type', 'demo.done', '--actor', 'human:ana']);
      expect(person.code).toBe(1);
      expect(person.stderr).toContain('PROVENANCE_CEILING');
    } finally {
      await server.stop();
    }
  });

  it("on a person's monitor: the command and its user, on the owner's behalf, at the person's level as before", async () => {
    const server = await startServerProcess({ args: ['--registration-token', 'reg-0123456789'] });
    try {
      const made = await call(server.base, 'POST', '/monitors', { token: 'reg-0123456789', body: {} });
      const { id, owner } = made.body.monitor;
      const token = made.body.owner_token;
      expect(owner).toBe('human:owner');
      const r = await vigil(project, ['publish', id, '--base', server.url, '--token', token, '--type', 'demo.done']);
      expect(r.code, r.stderr).toBe(0);
      const o = await lastObservation(server, id, token);
      expect(o).toMatchObject({ actor: me, origin: 'human', tier: 'measured', verified: 'reported' });
      expect(o.data.provenance).toMatchObject({ actor: me, on_behalf_of: 'human:owner', wasAttributedTo: 'human:owner' });
      const other = await vigil(project, ['publish', id, '--base', server.url, '--token', token, '--type', 'demo.done', '--actor', 'human:mallory']);
      expect(other.code).toBe(1);
      expect(other.stderr).toContain('names a person who is not this monitor');
    } finally {
      await server.stop();
    }
  });
});
