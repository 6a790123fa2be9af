// A client subscribing with several bearers (a sentinel: the token of the subscription it stored, then its
// recipe's watch.token) goes on to the next one while the server refuses a bearer. A server restarted in
// memory (or restored) no longer knows the stored token and answers 404 for a private monitor, as it does
// to any unknown bearer: the sentinel once retried that token for ever and never watched again.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ServerError } from '../../src/server-client/server-client.ts';
import { ProtocolClient } from '../../src/server-client/protocol-client.ts';
import { createMonitor } from '../support/client.ts';
import { type ServerProcess, startServerProcess } from '../support/server-process.ts';

let server: ServerProcess;
beforeAll(async () => {
  server = await startServerProcess();
});
afterAll(async () => {
  await server?.stop();
});

const body = { monitor: 'watched', subscriber: 'sentinel:s:1', capabilities: ['observe', 'act'], from: 'head' as const };

it('subscribes with the next bearer when the server does not know the first (404 on a private monitor)', async () => {
  const { ownerToken } = await createMonitor(server.base, { id: 'watched', capabilities: ['observe', 'act'] });
  const client = new ProtocolClient(server.base);
  const forgotten = 'vgs_a_token_from_before_the_server_restarted';
  await expect(client.subscribe([forgotten], body)).rejects.toMatchObject({ status: 404 });
  const ref = await client.subscribe([forgotten, ownerToken], body);
  expect(ref.id).toMatch(/^sub-/);
  expect(ref.token).not.toBe(ownerToken);
  // The stored token works again once re-keyed, and the refusal of the last bearer is what is thrown.
  expect((await client.subscribe([ref.token], body)).id).toBe(ref.id);
  const error = await client.subscribe([forgotten, 'vgo_wrong_owner'], body).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ServerError);
});
