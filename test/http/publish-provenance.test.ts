// Publishing single observations and batches, and the provenance ladder (§4, §5).
import { describe, expect, it } from 'vitest';
import { call, createMonitor, publish } from '../support/client.ts';
import { transports } from '../support/server-process.ts';
import { headOf, observationAt, path, readFeed, useServer, vigilType } from './fixtures.ts';

describe.each(transports)('publish and provenance over %s', (transport) => {
  const server = useServer({ transport });

  it('a single publish returns the CloudEvents observation and its seq', async () => {
    const { id, ownerToken } = await createMonitor(server.base, {});
    const reply = await publish(server.base, id, ownerToken, {
      type: 'app.disk.full',
      subject: 'host-1',
      data: { percent: 97 },
      tags: { region: 'eu' },
      source_ref: 'df://host-1',
    });
    expect(reply.status).toBe(201);
    const { observation, seq } = reply.body;
    expect(seq).toBe(2);
    expect(observation).toMatchObject({
      specversion: '1.0',
      id: '2',
      source: `monitor:${id}`,
      type: 'app.disk.full',
      subject: 'host-1',
      datacontenttype: 'application/json',
      sequence: '00000000000000000002',
      horizon: 'event',
      actor: 'agent:owner',
      data: { percent: 97, tags: { region: 'eu' }, provenance: { source_ref: 'df://host-1' } },
    });
    expect(Object.keys(observation.data.provenance).sort()).toEqual(
      ['origin', 'tier', 'verification', 'actor', 'on_behalf_of', 'attested', 'source_ref', 'wasDerivedFrom', 'wasAttributedTo', 'supersedes'].sort(),
    );
    expect(await observationAt(server.base, id, ownerToken, 2)).toEqual(observation);
  });

  it('publish needs the owner token; the refusal is the only thing stored', async () => {
    const { id, ownerToken } = await createMonitor(server.base, { visibility: 'public' });
    const other = await createMonitor(server.base, {});
    for (const token of [undefined, other.ownerToken]) {
      const before = await headOf(server.base, id, ownerToken);
      const reply = await publish(server.base, id, token as string, { type: 'app.x' });
      expect(reply.status).toBe(401);
      expect(reply.body.code).toBe('UNAUTHORIZED');
      expect(reply.body.rejected_seq).toBe(before + 1);
      expect(await headOf(server.base, id, ownerToken)).toBe(before + 1);
    }
    expect((await readFeed(server.base, id, ownerToken)).filter((o) => o.type === 'app.x')).toHaveLength(0);
  });

  it('a correction names what it supersedes; nothing is edited', async () => {
    const { id, ownerToken } = await createMonitor(server.base, {});
    const first = await publish(server.base, id, ownerToken, { type: 'app.x', data: { v: 1 } });
    const fix = await publish(server.base, id, ownerToken, {
      type: 'app.x',
      data: { v: 2 },
      supersedes: { source: `monitor:${id}`, id: first.body.observation.id },
    });
    expect(fix.status).toBe(201);
    expect(fix.body.observation.data.provenance.supersedes).toEqual({ source: `monitor:${id}`, id: first.body.observation.id });
    expect((await observationAt(server.base, id, ownerToken, first.body.seq)).data.v).toBe(1);
  });

  it('a batch is stored with consecutive seqs', async () => {
    const { id, ownerToken } = await createMonitor(server.base, {});
    const reply = await call(server.base, 'POST', path(id, '/observations'), {
      token: ownerToken,
      body: { observations: [{ type: 'app.a', subject: 'x' }, { type: 'app.b' }, { type: 'app.c', data: { n: 3 } }] },
    });
    expect(reply.status).toBe(201);
    expect(reply.body.seqs).toEqual([2, 3, 4]);
    const feed = await readFeed(server.base, id, ownerToken);
    expect(feed.slice(1, 4).map((o) => o.type)).toEqual(['app.a', 'app.b', 'app.c']);
  });

  it('a batch with one bad item stores nothing but the refusal', async () => {
    const { id, ownerToken } = await createMonitor(server.base, {});
    const cases = [
      [{ type: 'app.ok' }, { type: 'app.ok', tier: 'gold' }],
      [{ type: 'app.ok' }, { type: 'app.ok', tier: 'src' }],
      [{ type: 'app.ok' }, { subject: 'no type' }],
      [{ type: 'app.ok' }, { type: vigilType('state') }],
    ];
    for (const observations of cases) {
      const before = await headOf(server.base, id, ownerToken);
      const reply = await call(server.base, 'POST', path(id, '/observations'), { token: ownerToken, body: { observations } });
      expect(reply.status).toBe(400);
      expect(reply.body.rejected_seq).toBe(before + 1);
      expect(await headOf(server.base, id, ownerToken)).toBe(before + 1);
    }
    const feed = await readFeed(server.base, id, ownerToken);
    expect(feed.filter((o) => o.type === 'app.ok')).toHaveLength(0);
  });

  it('a batch over 1000 items is refused', async () => {
    const { id, ownerToken } = await createMonitor(server.base, {});
    const observations = Array.from({ length: 1001 }, () => ({ type: 'app.x' }));
    const reply = await call(server.base, 'POST', path(id, '/observations'), { token: ownerToken, body: { observations } });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('INVALID');
    expect((await readFeed(server.base, id, ownerToken)).filter((o) => o.type === 'app.x')).toHaveLength(0);
  });

  it('reserved types state and bookmark are 400 INVALID', async () => {
    const { id, ownerToken } = await createMonitor(server.base, {});
    for (const type of [vigilType('state'), vigilType('bookmark')]) {
      const reply = await publish(server.base, id, ownerToken, { type });
      expect(reply.status).toBe(400);
      expect(reply.body.code).toBe('INVALID');
    }
  });

  it('defaults for an agent owner stay at the bottom of the ladder', async () => {
    const { id, ownerToken } = await createMonitor(server.base, {});
    const plain = (await publish(server.base, id, ownerToken, { type: 'app.x' })).body.observation;
    expect(plain).toMatchObject({ origin: 'agent', tier: 'unverified', verified: 'unverified', actor: 'agent:owner' });
    const probe = (await publish(server.base, id, ownerToken, { type: 'app.x', actor: 'probe:ping' })).body.observation;
    expect(probe).toMatchObject({ origin: 'probe', tier: 'measured', verified: 'machine_verified', actor: 'probe:ping' });
    const hook = (await publish(server.base, id, ownerToken, { type: 'app.x', actor: 'hook:gh' })).body.observation;
    expect(hook).toMatchObject({ origin: 'webhook', tier: 'measured', verified: 'machine_verified' });
    const other = (await publish(server.base, id, ownerToken, { type: 'app.x', actor: 'robot-7' })).body.observation;
    expect(other).toMatchObject({ origin: 'agent', tier: 'unverified' });
  });

  it('refusals on an agent-owned monitor, first match wins, each recorded', async () => {
    const { id, ownerToken } = await createMonitor(server.base, {});
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ tier: 'gold', on_behalf_of: 'human:ana' }, 400, 'UNKNOWN_VOCABULARY'],
      [{ origin: 'alien' }, 400, 'UNKNOWN_VOCABULARY'],
      [{ verification: 'notarised' }, 400, 'UNKNOWN_VOCABULARY'],
      [{ on_behalf_of: 'human:ana', tier: 'src' }, 403, 'PROVENANCE_CEILING'],
      [{ tier: 'src' }, 400, 'TIER_NOT_ASSERTABLE'],
      [{ tier: 'src', origin: 'probe' }, 400, 'TIER_NOT_ASSERTABLE'],
      [{ tier: 'src', origin: 'human' }, 403, 'PROVENANCE_CEILING'],
      [{ origin: 'human' }, 403, 'PROVENANCE_CEILING'],
      [{ actor: 'human:bob' }, 403, 'PROVENANCE_CEILING'],
      [{ verification: 'certified' }, 403, 'PROVENANCE_CEILING'],
      [{ verification: 'human_verified' }, 403, 'PROVENANCE_CEILING'],
    ];
    for (const [claims, status, code] of cases) {
      const body = { type: 'app.claim', ...claims };
      const reply = await publish(server.base, id, ownerToken, body);
      expect({ claims, status: reply.status, code: reply.body.code }).toEqual({ claims, status, code });
      const entry = await observationAt(server.base, id, ownerToken, reply.body.rejected_seq);
      expect(entry.type).toBe(vigilType('rejected'));
      expect(entry.data.payload).toMatchObject({ code, raw: body });
    }
    const vocabulary = await publish(server.base, id, ownerToken, { type: 'app.claim', tier: 'gold', origin: 'alien' });
    expect(vocabulary.body.invalid).toHaveLength(2);
    expect(vocabulary.body.known.tier).toEqual(['src', 'measured', 'derived', 'unverified', 'falsified']);
    expect((await readFeed(server.base, id, ownerToken)).filter((o) => o.type === 'app.claim')).toHaveLength(0);
  });

  it('a human owner reaches the top; an agent reaches it only on behalf of that owner', async () => {
    const { id, ownerToken } = await createMonitor(server.base, { owner: 'human:ana' });
    const own = (await publish(server.base, id, ownerToken, { type: 'app.x' })).body.observation;
    // Even a human's defaults are not the top of the ladder.
    expect(own).toMatchObject({ origin: 'human', tier: 'measured', verified: 'reported', actor: 'human:ana' });
    const src = await publish(server.base, id, ownerToken, { type: 'app.x', tier: 'src', verification: 'human_verified' });
    expect(src.status).toBe(201);

    const asHuman = await publish(server.base, id, ownerToken, { type: 'app.x', actor: 'agent:bot', origin: 'human' });
    expect(asHuman.status).toBe(403);
    expect(asHuman.body.code).toBe('PROVENANCE_CEILING');
    const agentSrc = await publish(server.base, id, ownerToken, { type: 'app.x', actor: 'agent:bot', tier: 'src' });
    expect(agentSrc.status).toBe(400);
    expect(agentSrc.body.code).toBe('TIER_NOT_ASSERTABLE');
    const someoneElse = await publish(server.base, id, ownerToken, { type: 'app.x', actor: 'agent:bot', on_behalf_of: 'human:bob' });
    expect(someoneElse.status).toBe(403);
    expect(someoneElse.body.code).toBe('PROVENANCE_CEILING');

    const onBehalf = await publish(server.base, id, ownerToken, {
      type: 'app.x',
      actor: 'agent:bot',
      on_behalf_of: 'human:ana',
      origin: 'human',
      tier: 'src',
      verification: 'certified',
    });
    expect(onBehalf.status).toBe(201);
    expect(onBehalf.body.observation).toMatchObject({ origin: 'human', tier: 'src', verified: 'certified', actor: 'agent:bot' });
    expect(onBehalf.body.observation.data.provenance).toMatchObject({ actor: 'agent:bot', on_behalf_of: 'human:ana', wasAttributedTo: 'human:ana' });
  });

  it("a token acts under its owner's name only: no other person's name, human: or user:", async () => {
    const { id, ownerToken } = await createMonitor(server.base, { owner: 'human:ana' });
    for (const actor of ['human:bob', 'user:ana', 'USER:bob']) {
      const claimed = await publish(server.base, id, ownerToken, { type: 'app.x', actor });
      expect({ actor, status: claimed.status, code: claimed.body.code }).toEqual({ actor, status: 403, code: 'PROVENANCE_CEILING' });
      expect(claimed.body.error).toContain('on_behalf_of');
    }
    const self = await publish(server.base, id, ownerToken, { type: 'app.x', actor: 'human:ana' });
    expect(self.body.observation).toMatchObject({ actor: 'human:ana', origin: 'human' });
    // A client names itself and acts for the person: the observation is theirs, the actor the client.
    const client = await publish(server.base, id, ownerToken, { type: 'app.x', actor: 'agent:vigil-publish/ana@laptop', on_behalf_of: 'human:ana', origin: 'human' });
    expect(client.body.observation).toMatchObject({ actor: 'agent:vigil-publish/ana@laptop', origin: 'human', tier: 'measured' });
    expect(client.body.observation.data.provenance.wasAttributedTo).toBe('human:ana');
  });
});

describe.each(transports)('a server requiring registration over %s', (transport) => {
  const server = useServer({ transport, args: ['--registration-token', 'reg-secret-42'] });

  it('create needs the registration token, as bearer or field; such monitors are attested and human-owned', async () => {
    const refused = await call(server.base, 'POST', '/monitors', { body: {} });
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('UNAUTHORIZED');
    const wrong = await call(server.base, 'POST', '/monitors', { body: {}, token: 'nope' });
    expect(wrong.status).toBe(401);
    const byField = await call(server.base, 'POST', '/monitors', { body: { registration_token: 'reg-secret-42' } });
    expect(byField.status).toBe(201);
    const byBearer = await call(server.base, 'POST', '/monitors', { body: {}, token: 'reg-secret-42' });
    expect(byBearer.status).toBe(201);
    expect(byBearer.body.monitor).toMatchObject({ owner: 'human:owner', attested: true });
    const state = await call(server.base, 'GET', path(byBearer.body.monitor.id, '/state'), { token: byBearer.body.owner_token });
    expect(state.body.confidence.gaps).not.toContain('unattested_origin');
  });

  it('the default human owner publishes as a human, and an agent acting on its behalf keeps both names', async () => {
    const created = await call(server.base, 'POST', '/monitors', { body: {}, token: 'reg-secret-42' });
    const { id } = created.body.monitor;
    const token = created.body.owner_token as string;
    const plain = (await publish(server.base, id, token, { type: 'app.x' })).body.observation;
    expect(plain).toMatchObject({ origin: 'human', tier: 'measured', verified: 'reported', actor: 'human:owner' });
    expect(plain.data.provenance.attested).toBe(true);
    const agent = await publish(server.base, id, token, { type: 'app.x', actor: 'agent:helper', origin: 'human' });
    expect(agent.body.code).toBe('PROVENANCE_CEILING');
    const behalf = await publish(server.base, id, token, {
      type: 'app.x',
      actor: 'agent:helper',
      on_behalf_of: 'human:owner',
      verification: 'human_verified',
    });
    expect(behalf.status).toBe(201);
    expect(behalf.body.observation.data.provenance).toMatchObject({ actor: 'agent:helper', on_behalf_of: 'human:owner' });
  });
});
