// How the network sources (http, feed, ws) reach other machines. Anyone who
// may create a monitor chooses its URL, so unless the server allows private
// sources every connection is checked where it is made: a name after it
// resolves, a literal address before connecting, and each redirect's target
// the same way (it is a new connection through the same agent). A refused
// source fails like an unreachable one and says why.
import type { RequestInit, Response } from 'undici';
import { GuardedClient, literalRefusal } from '../net/guarded-client.ts';
import { guardedLookup } from '../net/inward-addresses.ts';
import { privateSourcesHint } from './config.ts';

export class Outbound {
  private readonly client: GuardedClient;
  readonly lookup: ReturnType<typeof guardedLookup>;

  constructor(readonly allowInward: boolean) {
    this.lookup = guardedLookup(allowInward, privateSourcesHint);
    this.client = new GuardedClient(this.lookup, (hostname) => this.refusal(hostname));
  }

  fetch(url: string, init: RequestInit = {}): Promise<Response> {
    return this.client.fetch(url, init);
  }

  /** Why a connection to this host is refused before it is made (a literal inward address), or undefined. */
  refusal(hostname: string): Error | undefined {
    return literalRefusal(hostname, this.allowInward, privateSourcesHint);
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
