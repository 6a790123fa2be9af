// `vigil serve --inspect[=<port>]` (§19): every actor of the root system is
// streamed to the Stately inspector protocol. The server runs the relay the
// protocol expects (a WebSocket server that replays recent events to each
// new client and forwards what one client sends to the others) and connects
// @statelyai/inspect's WebSocket inspector to it. GET on the port serves a
// page that opens https://stately.ai/inspect and feeds it; nothing opens a
// browser. The relay listens on the server's host only.
import { createServer } from 'node:http';
import { createWebSocketInspector } from '@statelyai/inspect';
import { WebSocket, WebSocketServer } from 'ws';
import type { InspectionEvent } from 'xstate';

/** Events replayed to a client that connects late (the inspector rebuilds its view from them). */
const replayEvents = 2000;

export interface RunningInspector {
  readonly url: string;
  readonly page: string;
  inspect(event: InspectionEvent): void;
  close(): Promise<void>;
}

/** Token hashes never leave the server, not even to the inspector. */
function sanitize(value: unknown, depth = 0): unknown {
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
const ws = new WebSocket('ws://' + location.host);
ws.onmessage = (event) => {
  const data = JSON.parse(event.data);
  if (connected) iframe.contentWindow.postMessage(data, '*');
  else buffer.push(data);
};
</script></body></html>`;
}

export async function startInspector(options: { port: number; host: string }): Promise<RunningInspector> {
  const http = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(bridgePage());
  });
  const relay = new WebSocketServer({ server: http, maxPayload: 16 << 20 });
  const recent: string[] = [];
  relay.on('connection', (socket) => {
    for (const message of recent) socket.send(message);
    socket.on('error', () => socket.terminate());
    socket.on('message', (data) => {
      const message = data.toString();
      recent.push(message);
      if (recent.length > replayEvents) recent.shift();
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
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  const url = `ws://${host}:${port}`;
  const inspector = createWebSocketInspector({
    url,
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
