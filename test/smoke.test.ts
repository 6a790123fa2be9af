import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createMonitor, publish } from './support/client.ts';
import { type ServerProcess, startServerProcess, transports } from './support/server-process.ts';

describe.each(transports)('a real server over %s', (transport) => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServerProcess({ transport });
  });
  afterAll(() => server?.stop());

  it('discovers, creates, publishes and reads the state', async () => {
    const discover = await call(server.base, 'GET', '/discover');
    expect(discover.status).toBe(200);
    expect(discover.body.supportedVersions).toEqual(['0.1']);
    const { id, ownerToken } = await createMonitor(server.base, { visibility: 'public' });
    const published = await publish(server.base, id, ownerToken, { type: 'test.event', subject: 'a' });
    expect(published.status).toBe(201);
    const state = await call(server.base, 'GET', `/monitors/${id}/state`);
    expect(state.body.counters.observations).toBe(1);
    expect(state.body.head).toBe(2);
  });
});
