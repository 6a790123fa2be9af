// An undici client that connects only where the rules allow: a literal
// address is checked before connecting, a name after it resolves
// (guardedLookup). The network sources and the managed-edge workers' fetches
// go through one each, with their own hint of how to allow more.
import { isIP } from 'node:net';
import type { Agent, fetch as undiciFetch, RequestInit, Response } from 'undici';
import { bracketless, type guardedLookup, isInwardAddress } from './inward-addresses.ts';

/** Why a connection to this host is refused before it is made (a literal inward address, unless allowed), or undefined. */
export function literalRefusal(hostname: string, allowInward: boolean, hint: string): Error | undefined {
  const host = bracketless(hostname);
  if (allowInward || isIP(host) === 0 || !isInwardAddress(host)) return undefined;
  return Object.assign(new Error(`${host} is a private, loopback or link-local address; ${hint}`), { code: 'EADDRNOTAVAIL' });
}

/**
 * fetch through an agent whose every connection (each redirect's too) is refused by `refusal` or
 * resolved by `lookup`. undici is loaded at the first fetch: loading it took 30 ms of CPU at every
 * start of a server, most of which never fetch.
 */
export class GuardedClient {
  private loaded: Promise<{ agent: Agent; fetch: typeof undiciFetch }> | undefined;

  constructor(
    private readonly lookup: ReturnType<typeof guardedLookup>,
    private readonly refusal: (hostname: string) => Error | undefined,
  ) {}

  async fetch(url: string, init: RequestInit): Promise<Response> {
    const { agent, fetch } = await this.load();
    return fetch(url, { ...init, dispatcher: agent });
  }

  async close(): Promise<void> {
    if (this.loaded) await (await this.loaded).agent.close();
  }

  private load(): Promise<{ agent: Agent; fetch: typeof undiciFetch }> {
    this.loaded ??= import('undici').then(({ Agent, buildConnector, fetch }) => {
      const connect = buildConnector({ lookup: this.lookup });
      const agent = new Agent({
        connect: (options, callback) => {
          const refused = this.refusal(options.hostname);
          if (refused) return callback(refused, null);
          connect(options, callback);
        },
      });
      return { agent, fetch };
    });
    return this.loaded;
  }
}
