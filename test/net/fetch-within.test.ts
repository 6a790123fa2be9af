// A fetch and the reading of its answer under one time limit: a server that sends its headers and then
// stalls the body does not hold a command past the limit (the limit also holds the process meanwhile:
// test/timing/linked-signal.test.ts).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { fetchWithin } from '../../src/net/fetch-within.ts';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

it('gives up reading an answer whose body stalls once the limit passes, and reads one that comes in time', async () => {
  server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    if (req.url === '/stall') res.write('part of it');
    else res.end('all of it');
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const root = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await expect(fetchWithin(`${root}/stall`, {}, 300, (r) => r.text())).rejects.toMatchObject({ name: 'TimeoutError' });
  expect(await fetchWithin(`${root}/whole`, {}, 5000, (r) => r.text())).toBe('all of it');
});
