// `vigil serve --inspect[=<port>]` (§19): every actor of the root system is
// streamed to the Stately inspector protocol. The server runs the relay the
// protocol expects (a WebSocket server that replays recent events to each
// new client and forwards the events to every client) and connects
// @statelyai/inspect's WebSocket inspector to it. Only the server's own
// connection, which presents a key made at start, is relayed and replayed,
// each message at most 4 MiB and the replay at most 32 MiB: any other local
// client's messages are dropped (60 of 10 MB each, relayed and kept for
// replay, took the server to 848 MB). GET on the port serves a page that
// opens https://stately.ai/inspect and feeds it; nothing opens a browser.
//
// Every actor's context passes through the relay, so it is guarded like the
// API: it listens on loopback unless --inspect-host says otherwise, and then
// only a client with the admin token (`?token=` or a bearer header) may
// connect; a browser's WebSocket from another origin is refused (the bridge
// page's own origin, and --allow-origin, are allowed), and on loopback the
// Host must name this machine (DNS rebinding). Token hashes are dropped and
// every text is redacted (src/net/redact.ts) before it leaves the server.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import { createWebSocketInspector } from '@statelyai/inspect';
import { WebSocket, WebSocketServer } from 'ws';
import type { InspectionEvent } from 'xstate';
import { redactCredentials } from '../net/redact.ts';
import { isLoopbackHost } from '../service/loopback.ts';
import { secretMatches } from '../service/tokens.ts';
import { browserGuard } from '../transport/browser-guard.ts';
import type { HttpRequest } from '../transport/http-types.ts';

/** Events replayed to a client that connects late (the inspector rebuilds its view from them)... */
const replayEvents = 2000;
/** ... at most this many bytes of them. */
const replayBytes = 32 << 20;
/** The largest message the relay takes; a client sending more is disconnected (1009). */
export const maxInspectorMessageBytes = 4 << 20;

export interface RunningInspector {
  readonly url: string;
  readonly page: string;
  inspect(event: InspectionEvent): void;
  close(): Promise<void>;
}

/** Token hashes never leave the server, not even to the inspector, and no text keeps a URL's credentials. */
function sanitize(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactCredentials(value);
  if (depth > 6 || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((v) => sanitize(v, depth + 1));
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !/hash$|token/i.test(key))
      .map(([key, v]) => [key, sanitize(v, depth + 1)]),
  );
}

function bridgePage(): string {
  // Same bridge as @statelyai/inspect/server, but it connects back to wherever it was served from.
  return `<!doctype html><html><head><meta charset="utf-8"><title>Vigil actors — Stately inspector</title>
<style>html,body,iframe{margin:0;height:100%;width:100%;border:0}</style></head><body>
<iframe id="inspector" src="https://stately.ai/inspect"></iframe>
<script>
const iframe = document.getElementById('inspector');
const buffer = [];
let connected = false;
window.addEventListener('message', (e) => {
  if (e.data && e.data.type === '@statelyai.connected') {
    connected = true;
    for (const event of buffer) iframe.contentWindow.postMessage(event, '*');
    buffer.length = 0;
  }
});
const token = new URLSearchParams(location.hash.slice(1)).get('token');
if (location.hash) history.replaceState(null, '', location.pathname);
const ws = new WebSocket('ws://' + location.host + '/' + (token ? '?token=' + encodeURIComponent(token) : ''));
ws.onmessage = (event) => {
  const data = JSON.parse(event.data);
  if (connected) iframe.contentWindow.postMessage(data, '*');
  else buffer.push(data);
};
</script></body></html>`;
}

export interface InspectorOptions {
  readonly port: number;
  /** Where it listens: loopback unless the user names another address. */
  readonly host: string;
  /** Required beyond loopback: the token a client presents. */
  readonly adminToken?: string;
  readonly allowOrigins: readonly string[];
  readonly allowHosts: readonly string[];
}

export class InspectorRefused extends Error {}

export async function startInspector(options: InspectorOptions): Promise<RunningInspector> {
  const needsToken = !isLoopbackHost(options.host);
  if (needsToken && !options.adminToken) {
    throw new InspectorRefused(
      `--inspect-host ${options.host} listens beyond loopback, where the inspector needs a token: start with --allow-admin (its token opens the inspector), or leave --inspect-host out.`,
    );
  }
  const http = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': "frame-ancestors 'none'", 'referrer-policy': 'no-referrer' });
    res.end(bridgePage());
  });
  const refusal = admission(options, needsToken);
  // The server's own inspector presents this key: its messages alone are relayed.
  const sourceKey = randomBytes(24).toString('base64url');
  const relay = new WebSocketServer({
    server: http,
    maxPayload: maxInspectorMessageBytes,
    verifyClient: ({ req }, done) => {
      const refused = refusal(req);
      if (refused) done(false, refused.status, refused.message);
      else done(true);
    },
  });
  const recent: string[] = [];
  let recentBytes = 0;
  relay.on('connection', (socket, req) => {
    socket.on('error', () => socket.terminate());
    const isSource = secretMatches(new URLSearchParams((req.url ?? '').split('?')[1] ?? '').get('source') ?? undefined, sourceKey);
    if (!isSource) {
      // A viewer: it receives; what it sends is nobody's business.
      for (const message of recent) socket.send(message);
      return;
    }
    socket.on('message', (data) => {
      const message = data.toString();
      recent.push(message);
      recentBytes += message.length;
      while (recent.length > replayEvents || (recentBytes > replayBytes && recent.length > 1)) recentBytes -= recent.shift()!.length;
      for (const client of relay.clients) if (client !== socket && client.readyState === WebSocket.OPEN) client.send(message);
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new Error(
          error.code === 'EADDRINUSE'
            ? `--inspect: port ${options.port} is already in use; choose another with --inspect=<port>`
            : `--inspect: cannot listen on ${options.host}:${options.port}: ${error.message}`,
        ),
      ),
    );
    http.listen(options.port, options.host, () => resolve());
  });
  const port = (http.address() as { port: number }).port;
  // A wildcard address is where it listens, not somewhere to connect: show this machine's loopback.
  const shown = options.host === '0.0.0.0' ? '127.0.0.1' : options.host === '::' ? '::1' : options.host;
  const host = shown.includes(':') ? `[${shown}]` : shown;
  const url = `ws://${host}:${port}`;
  const inspector = createWebSocketInspector({
    // The server's own feed presents its key, and the token like any client.
    url: `${url}/?source=${sourceKey}${needsToken ? `&token=${encodeURIComponent(options.adminToken!)}` : ''}`,
    maxDeferredEvents: replayEvents,
    sanitizeContext: (context) => sanitize(context) as typeof context,
    sanitizeEvent: (event) => sanitize(event) as typeof event,
  });
  return {
    url,
    page: `http://${host}:${port}/`,
    inspect: (event) => inspector.inspect.next?.(event),
    async close() {
      inspector.stop();
      for (const client of relay.clients) client.terminate();
      relay.close();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** Why a WebSocket upgrade is refused (the API's browser rules, and the token beyond loopback), or undefined. */
function admission(options: InspectorOptions, needsToken: boolean): (req: IncomingMessage) => { status: number; message: string } | undefined {
  const guard = browserGuard({ allowOrigins: options.allowOrigins, allowHosts: options.allowHosts });
  return (req) => {
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));
    // The bridge page this port serves connects back to where it came from: its own origin.
    if (headers.origin !== undefined && headers.host !== undefined && headers.origin.toLowerCase() === `http://${headers.host.toLowerCase()}`) delete headers.origin;
    const query = (req.url ?? '').split('?')[1] ?? '';
    const verdict = guard({ method: 'GET', path: '/', query, headers, remoteAddress: req.socket.remoteAddress ?? '', body: Buffer.alloc(0), signal: AbortSignal.abort() } satisfies HttpRequest);
    if (verdict.kind === 'refused') return { status: 403, message: verdict.error.message };
    if (!needsToken) return undefined;
    const presented = new URLSearchParams(query).get('token') ?? /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '')?.[1];
    if (!secretMatches(presented, options.adminToken!)) return { status: 401, message: 'The inspector needs the admin token: connect with ?token=<admin token> or Authorization: Bearer <admin token>.' };
    return undefined;
  };
}
