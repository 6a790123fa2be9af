// `ws`: a WebSocket client (the `ws` package) that writes each message it
// receives; a closed or failed connection makes the actor back off and
// reconnect. Pings keep `since_last_source_contact_s` fresh while it is quiet.
import WebSocket from 'ws';
import { redactCredentials } from '../../net/redact.ts';
import type { SourceRun } from '../run.ts';

const pingMs = 15_000;
const maxMessageBytes = 1 << 20;

export function runWs(run: SourceRun): void {
  const { url, subprotocol } = run.settings<{ url: string; subprotocol?: string }>();
  // Observations are read by every subscriber: the URL's credentials stay out of them.
  const shown = redactCredentials(url);
  const refused = run.outbound.refusal(new URL(url).hostname);
  if (refused) {
    run.fail(`${url}: ${refused.message}`);
    return;
  }
  // No redirects (ws follows none by default); a name is checked after it resolves.
  const socket = new WebSocket(url, subprotocol ? [subprotocol] : [], {
    maxPayload: maxMessageBytes,
    handshakeTimeout: 30_000,
    lookup: run.outbound.lookup,
  });
  let ping: ReturnType<typeof setInterval> | undefined;
  const close = () => {
    clearInterval(ping);
    socket.removeAllListeners();
    socket.on('error', () => undefined);
    socket.terminate();
  };
  run.signal.addEventListener('abort', close, { once: true });
  socket.on('open', () => {
    run.contact();
    ping = setInterval(() => socket.ping(), pingMs);
  });
  socket.on('pong', () => run.contact());
  socket.on('message', (raw, isBinary) => {
    const text = Buffer.isBuffer(raw) ? raw : Buffer.concat(Array.isArray(raw) ? raw : [Buffer.from(raw)]);
    let message: unknown;
    if (isBinary) message = { base64: text.toString('base64') };
    else {
      const value = text.toString('utf8');
      try {
        message = JSON.parse(value);
      } catch {
        message = value;
      }
    }
    run.emit({ subject: shown, data: { url: shown, message } });
  });
  socket.on('error', (error) => {
    close();
    run.fail(`${url}: ${error.message}`);
  });
  socket.on('close', (code, reason) => {
    close();
    run.fail(`${url} closed the connection (${code}${reason.length ? ` ${reason.toString()}` : ''})`);
  });
}
