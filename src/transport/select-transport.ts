// Picks the socket library: uWS when its native module loads, node:http otherwise.
import type { HttpTransport } from './http-types.ts';
import { createNodeHttpTransport } from './node-http-transport.ts';
import { UwsTransport } from './uws-transport.ts';
import { probeUws } from './uws/native.ts';

export type TransportChoice = 'uws' | 'node' | 'auto';

/**
 * 'uws' insists on uWS and throws when it cannot load; 'auto' falls back to
 * node:http and says why in `fallbackReason` (meant to be printed at start).
 */
export async function createTransport(preferred: TransportChoice): Promise<HttpTransport & { fallbackReason?: string }> {
  if (preferred === 'node') return createNodeHttpTransport();
  const probe = probeUws();
  if (probe.ok) return new UwsTransport(probe.uws);
  if (preferred === 'uws') throw new Error(`cannot use the uws transport: ${probe.reason}`);
  return Object.assign(createNodeHttpTransport(), {
    fallbackReason: `using node:http because ${probe.reason}`,
  });
}
