// A server of another vendor, for the conformance suite's --vendor: a small
// HTTP proxy in front of a real Vigil that speaks the base protocol with
// another vendor segment instead of `ai.vigil` (`ai.other` by default, or
// `ai.mentu` as the reference names itself: bookkeeping types
// `<vendor>.monitor.*`, the tool extension `<vendor>/monitors`, timers acting
// as `system:<name>`), rewriting requests on the way in and replies, event
// streams included, on the way out. Lengths are recomputed.
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const otherVendor = 'ai.other';

const rewriters = (vendor: string) => ({
  inward: (text: string) => text.replaceAll(`${vendor}.`, 'ai.vigil.').replaceAll(`${vendor}/`, 'ai.vigil/'),
  outward: (text: string) =>
    text.replaceAll('ai.vigil.', `${vendor}.`).replaceAll('ai.vigil/', `${vendor}/`).replaceAll('system:vigil', `system:${vendor.split('.').pop()}`),
});

// Host passes through as the client sent it: the server's Host rules (§13) see the client's.
const hopByHop = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length']);

function copyHeaders(headers: IncomingMessage['headers']): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !hopByHop.has(name)) out[name] = value;
  return out;
}

export interface VendorProxy {
  readonly url: string;
  close(): Promise<void>;
}

export async function startVendorProxy(upstream: string, vendor = otherVendor): Promise<VendorProxy> {
  const target = new URL(upstream);
  const { inward, outward } = rewriters(vendor);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const body = Buffer.from(inward(Buffer.concat(chunks).toString('utf8')));
      const headers = { ...copyHeaders(req.headers), ...(chunks.length > 0 ? { 'content-length': String(body.length) } : {}) };
      const path = inward(req.url ?? '/');
      const forward = request({ host: target.hostname, port: target.port, method: req.method, path, headers }, (reply) => {
        const replyHeaders = copyHeaders(reply.headers);
        if (String(reply.headers['content-type'] ?? '').startsWith('text/event-stream')) {
          res.writeHead(reply.statusCode ?? 502, replyHeaders);
          res.flushHeaders();
          // Rewritten event by event, so that no name is split between two reads.
          let pending = '';
          reply.setEncoding('utf8');
          reply.on('data', (text: string) => {
            pending += text;
            const end = pending.lastIndexOf('\n\n');
            if (end === -1) return;
            res.write(outward(pending.slice(0, end + 2)));
            pending = pending.slice(end + 2);
          });
          reply.on('end', () => res.end(outward(pending)));
          return;
        }
        const parts: Buffer[] = [];
        reply.on('data', (d: Buffer) => parts.push(d));
        reply.on('end', () => {
          const text = Buffer.from(outward(Buffer.concat(parts).toString('utf8')));
          res.writeHead(reply.statusCode ?? 502, { ...replyHeaders, 'content-length': String(text.length) });
          res.end(req.method === 'HEAD' ? undefined : text);
        });
      });
      forward.on('error', () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      // The client went away before its answer was complete.
      res.on('close', () => {
        if (!res.writableFinished) forward.destroy();
      });
      forward.end(body);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
