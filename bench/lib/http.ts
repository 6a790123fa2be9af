// A keep-alive HTTP client on node:http: cheaper per request than fetch,
// which matters when the load generator shares two cores with the server.
import http from 'node:http';

export interface Reply {
  readonly status: number;
  readonly body: string;
}

export type Requester = (method: 'GET' | 'POST', path: string, body?: unknown, token?: string) => Promise<Reply>;

/** `base` is the protocol root, e.g. http://127.0.0.1:8130/mp/v0. */
export function client(base: string, sockets: number): Requester {
  const url = new URL(base);
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  const prefix = url.pathname.replace(/\/$/, '');
  return (method, path, body, token) =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
      const headers: Record<string, string> = {};
      if (payload !== undefined) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = String(Buffer.byteLength(payload));
      }
      if (token) headers.authorization = `Bearer ${token}`;
      const req = http.request({ host: url.hostname, port: url.port, method, path: `${prefix}${path}`, agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
}

/** Sends and parses a JSON reply, failing on an unexpected status. */
export async function json<T = Record<string, unknown>>(
  request: Requester,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  token?: string,
): Promise<T> {
  const reply = await request(method, path, body, token);
  if (reply.status >= 300) throw new Error(`${method} ${path} → ${reply.status} ${reply.body.slice(0, 300)}`);
  return JSON.parse(reply.body) as T;
}
