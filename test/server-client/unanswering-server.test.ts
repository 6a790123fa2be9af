// A server that accepts the connection and never answers (paused, partitioned
// away, wedged) held every request of the CLI's client for undici's five
// minutes: a step waiting for its concurrency slot, a sentinel's pull, a
// `vigil publish`. Requests now give up after their limit, saying which
// server did not answer what, and a caller's own stop ends them at once.
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { serverClient, UnreachableError } from '../../src/server-client/server-client.ts';

let silent: Server;
const sockets = new Set<Socket>();
let base: string;
beforeAll(async () => {
  // Reads what it is sent and never writes a byte back.
  silent = createServer((socket) => {
    sockets.add(socket);
    socket.on('data', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((done) => silent.close(() => done()));
});

it('gives up after its limit, naming the server and the request, as unreachable (exit 3)', async () => {
  const failure = await serverClient(base)
    .request('POST', '/monitors/m/observations?x=1', { body: {}, timeoutMs: 300 })
    .catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(UnreachableError);
  expect((failure as UnreachableError).message).toBe(`${base}/mp/v0 did not answer POST /monitors/m/observations within 0.3 s`);
  expect((failure as UnreachableError).exitCode).toBe(3);
});

it("ends at once when the caller's own signal aborts, with the caller's reason", async () => {
  const stop = new AbortController();
  const pending = serverClient(base)
    .request('GET', '/discover', { signal: stop.signal })
    .catch((error: unknown) => error);
  const reason = Object.assign(new Error('the run was cancelled by SIGINT'), { name: 'AbortError' });
  stop.abort(reason);
  expect(await pending).toBe(reason);
});
