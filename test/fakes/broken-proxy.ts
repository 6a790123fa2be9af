// A small HTTP proxy in front of a real vigil server that breaks one rule of
// the protocol (a "fault"), so the conformance suite can be shown to fail
// against a server that is wrong in exactly that way. Event streams pass
// through untouched (but their requests may be rewritten).
import { createServer, type IncomingHttpHeaders, request as forward } from 'node:http';
import type { AddressInfo } from 'node:net';

/** JSON as the client or server sent it; faults look at it field by field. */
export type Json = any;

export interface ProxiedRequest {
  method: string;
  /** Path and query, e.g. `/mp/v0/subscriptions/s1/pull?limit=2`. */
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body, when the body was JSON; `raw` otherwise. */
  json?: Json;
  raw: Buffer;
}

export interface Fault {
  readonly name: string;
  /** Rewrites the request before it reaches the real server. */
  request?(req: ProxiedRequest): void;
  /** Sees (and may rewrite) each JSON reply; returns the body to send. */
  response?(req: ProxiedRequest, status: number, body: Json): { status: number; body: Json };
}

export interface BrokenServer {
  readonly url: string;
  readonly base: string;
  close(): Promise<void>;
}

export async function startBrokenProxy(target: string, fault: Fault): Promise<BrokenServer> {
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const proxied: ProxiedRequest = { method: req.method ?? 'GET', path: req.url ?? '/', headers: { ...req.headers }, raw };
      try {
        if (raw.length > 0) proxied.json = JSON.parse(raw.toString('utf8'));
      } catch {}
      fault.request?.(proxied);
      const body = proxied.json !== undefined && fault.request ? Buffer.from(JSON.stringify(proxied.json)) : raw;
      const headers: IncomingHttpHeaders = { ...proxied.headers, 'content-length': String(body.length) };
      if (body.length === 0 && req.headers['content-length'] === undefined) delete headers['content-length'];
      const out = forward({ host: upstream.hostname, port: upstream.port, method: proxied.method, path: proxied.path, headers }, (reply) => {
        const type = String(reply.headers['content-type'] ?? '');
        if (type.startsWith('text/event-stream') || !fault.response) {
          res.writeHead(reply.statusCode ?? 502, reply.headers);
          reply.pipe(res);
          return;
        }
        const parts: Buffer[] = [];
        reply.on('data', (c: Buffer) => parts.push(c));
        reply.on('end', () => {
          const text = Buffer.concat(parts).toString('utf8');
          let status = reply.statusCode ?? 502;
          let payload = text;
          if (type.includes('json') && text) {
            const changed = fault.response!(proxied, status, JSON.parse(text));
            status = changed.status;
            payload = JSON.stringify(changed.body);
          }
          const headers: IncomingHttpHeaders = { ...reply.headers, 'content-length': String(Buffer.byteLength(payload)) };
          delete headers['transfer-encoding'];
          res.writeHead(status, headers);
          res.end(payload);
        });
      });
      out.on('error', () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      res.on('close', () => out.destroy());
      out.end(body);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    base: `${url}/mp/v0`,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
