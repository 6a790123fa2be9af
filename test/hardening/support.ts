// Helpers for the hardening suite: raw sockets (to send what fetch will not),
// the admin token a server printed, and small waits.
import { connect } from 'node:net';
import { replayAll } from '../support/client.ts';

export interface RawReply {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: any;
  readonly text: string;
}

/** Parses the first HTTP/1.1 response in `raw` (Content-Length or chunked). */
export function parseRawReply(raw: string): RawReply | undefined {
  const headEnd = raw.indexOf('\r\n\r\n');
  if (headEnd === -1) return undefined;
  const [statusLine = '', ...lines] = raw.slice(0, headEnd).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let rest = raw.slice(headEnd + 4);
  if (headers['transfer-encoding']?.includes('chunked')) {
    let text = '';
    for (;;) {
      const lineEnd = rest.indexOf('\r\n');
      if (lineEnd === -1) return undefined;
      const size = Number.parseInt(rest.slice(0, lineEnd), 16);
      if (size === 0) break;
      if (rest.length < lineEnd + 2 + size) return undefined;
      text += rest.slice(lineEnd + 2, lineEnd + 2 + size);
      rest = rest.slice(lineEnd + 4 + size);
    }
    rest = text;
  } else {
    const length = Number(headers['content-length'] ?? 0);
    if (Buffer.byteLength(rest) < length) return undefined;
    rest = rest.slice(0, length);
  }
  let body: unknown = rest;
  try {
    body = rest ? JSON.parse(rest) : undefined;
  } catch {
    // Left as text.
  }
  return { status, headers, body, text: rest };
}

/**
 * Sends `head` (request line and headers, without the blank line), then each
 * chunk in `parts`, and resolves with the first complete reply — without
 * sending anything more. `parts` may be empty.
 */
export function rawExchange(port: number, head: string, parts: readonly (string | Buffer)[] = [], timeoutMs = 5000): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let raw = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete reply in ${timeoutMs} ms; got: ${raw.slice(0, 300)}`));
    }, timeoutMs);
    socket.setEncoding('utf8');
    socket.on('data', (data: string) => {
      raw += data;
      const reply = parseRawReply(raw);
      if (reply) {
        clearTimeout(timer);
        socket.destroy();
        resolve(reply);
      }
    });
    socket.on('error', (error) => {
      const reply = parseRawReply(raw);
      clearTimeout(timer);
      if (reply) resolve(reply);
      else reject(error);
    });
    socket.on('connect', () => {
      socket.write(`${head}\r\n\r\n`);
      for (const part of parts) socket.write(part);
    });
  });
}

/** The admin token a server printed at start (the line follows the "serving" line). */
export async function adminTokenOf(output: () => string): Promise<string> {
  for (let waited = 0; waited < 5000; waited += 20) {
    const match = /admin token (vga_[A-Za-z0-9_-]+)/.exec(output());
    if (match) return match[1]!;
    await sleep(20);
  }
  throw new Error(`no admin token printed:\n${output()}`);
}

export const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

export const leaseType = 'ai.vigil.monitor.lease';

/** Every observation of a monitor from `from`, read through one subscription with replay cursors. */
export const readAll = replayAll;
