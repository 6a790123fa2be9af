// The HTTP/1.1 details uWS leaves to its user: status lines, header folding,
// framing checks and client addresses.
import { STATUS_CODES } from 'node:http';
import { SocketAddress } from 'node:net';
import type * as Uws from 'uWebSockets.js';
import type { FullResponse } from '../http-types.ts';

// A client's address is parsed once, not on every request of its keep-alive connection.
const normalizedAddresses = new Map<string, string>();

/** uWS prints every IPv6 address in full ("0000:...:ffff:7f00:0001"); give the usual short form. */
export function normalizeRemoteAddress(text: string): string {
  let known = normalizedAddresses.get(text);
  if (known === undefined) {
    known = normalizeAddress(text);
    if (normalizedAddresses.size >= 1024) normalizedAddresses.delete(normalizedAddresses.keys().next().value!);
    normalizedAddresses.set(text, known);
  }
  return known;
}

function normalizeAddress(text: string): string {
  if (!text.includes(':')) return text;
  try {
    const canonical = new SocketAddress({ address: text, family: 'ipv6' }).address;
    return /^::ffff:\d+\.\d+\.\d+\.\d+$/.test(canonical) ? canonical.slice(7) : canonical;
  } catch {
    return text;
  }
}

export const decoder = new TextDecoder();
// uWS frames these itself; passing them through would duplicate them.
const framingHeaders = new Set(['content-length', 'transfer-encoding']);

const statusLines = new Map<number, string>();

export function statusLine(status: number): string {
  let line = statusLines.get(status);
  if (line === undefined) {
    line = `${status} ${STATUS_CODES[status] ?? 'OK'}`;
    statusLines.set(status, line);
  }
  return line;
}

export function writeHead(res: Uws.HttpResponse, status: number, headers: Readonly<Record<string, string>>): void {
  res.writeStatus(statusLine(status));
  for (const [name, value] of Object.entries(headers)) {
    if (!framingHeaders.has(name.toLowerCase())) res.writeHeader(name, value);
  }
}

export function readHeaders(req: Uws.HttpRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  req.forEach((name, value) => {
    const previous = headers[name];
    headers[name] = previous === undefined ? value : `${previous}, ${value}`;
  });
  return headers;
}

export function framingError(headers: Record<string, string>): string | undefined {
  const length = headers['content-length'];
  if (length !== undefined && !/^\d{1,15}$/.test(length.trim())) {
    return length.includes(',') ? 'The request has more than one Content-Length header.' : `Content-Length "${length.slice(0, 40)}" is not a number of bytes.`;
  }
  if (length !== undefined && headers['transfer-encoding'] !== undefined) return 'The request has both Content-Length and Transfer-Encoding.';
  return undefined;
}

export function invalidFraming(error: string): FullResponse {
  return {
    kind: 'full',
    status: 400,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify({ code: 'INVALID', error }),
  };
}
