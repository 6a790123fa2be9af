// A webhook receiver as a user writes one: a node:http server that checks
// every delivery's signature with the standardwebhooks library's verifier.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  headers: Record<string, string>;
  body: any;
  verified: boolean;
  error?: string;
}

export interface Receiver {
  readonly url: string;
  readonly port: number;
  readonly received: Received[];
  /** Status codes to answer with, in order; 200 once they run out. */
  answers: number[];
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(secret: string, port = 0): Promise<Receiver> {
  const verifier = new Webhook(new TextEncoder().encode(secret), { format: 'raw' });
  const received: Received[] = [];
  const waiters = new Set<() => void>();
  const receiver = {} as Receiver & { answers: number[] };
  receiver.answers = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c) => chunks.push(c));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)]));
      let entry: Received;
      try {
        entry = { headers, body: verifier.verify(text, headers), verified: true };
      } catch (error) {
        entry = { headers, body: text, verified: false, error: (error as Error).message };
      }
      received.push(entry);
      for (const wake of waiters) wake();
      response.writeHead(entry.verified ? (receiver.answers.shift() ?? 200) : 400).end();
    });
  });
  await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
  const actual = (server.address() as AddressInfo).port;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${actual}/hook`,
    port: actual,
    received,
    waitFor(count: number, timeoutMs = 30_000) {
      return new Promise<Received[]>((done, fail) => {
        const check = () => {
          if (received.length < count) return;
          waiters.delete(check);
          clearTimeout(timer);
          done(received);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          fail(new Error(`receiver got ${received.length} of ${count} deliveries`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  });
}
