// An undici agent that connects only where the rules allow: a literal
// address is checked before connecting, a name after it resolves
// (guardedLookup). The network sources and the managed-edge workers' fetches
// go through one each, with their own hint of how to allow more.
import { isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { bracketless, type guardedLookup, isInwardAddress } from './inward-addresses.ts';

/** Why a connection to this host is refused before it is made (a literal inward address, unless allowed), or undefined. */
export function literalRefusal(hostname: string, allowInward: boolean, hint: string): Error | undefined {
  const host = bracketless(hostname);
  if (allowInward || isIP(host) === 0 || !isInwardAddress(host)) return undefined;
  return Object.assign(new Error(`${host} is a private, loopback or link-local address; ${hint}`), { code: 'EADDRNOTAVAIL' });
}

/** An agent whose every connection (each redirect's too) is refused by `refusal` or resolved by `lookup`. */
export function guardedAgent(lookup: ReturnType<typeof guardedLookup>, refusal: (hostname: string) => Error | undefined): Agent {
  const connect = buildConnector({ lookup });
  return new Agent({
    connect: (options, callback) => {
      const refused = refusal(options.hostname);
      if (refused) return callback(refused, null);
      connect(options, callback);
    },
  });
}
