// What an operation is told of the HTTP request that asked for it: the caller
// and the invoke options. Classes, not object literals with getters: a
// literal's accessors are made anew for every request, and V8 then kept a
// quarter of each young generation alive past its scavenges (see UwsRequest).
import type { Caller } from '../service/access.ts';
import { hasClientGone } from '../service/client-gone.ts';
import type { InvokeOptions } from '../service/operations.ts';
import type { HttpRequest } from './http-types.ts';

/** The caller of one request: its bearer, and its address read only when an operation asks (a per-client limit). */
export class RequestCaller implements Caller {
  constructor(
    readonly bearer: string | undefined,
    private readonly request: HttpRequest,
  ) {}

  get address(): string {
    return this.request.remoteAddress;
  }
}

/** The invoke options of one request (or one call of a JSON-RPC batch). */
export class RequestInvoke implements InvokeOptions {
  constructor(
    readonly caller: Caller,
    private readonly request: HttpRequest,
    readonly raw: () => unknown,
    readonly splitCommas?: boolean,
    readonly maxPageBytes?: number,
  ) {}

  /** Read only by an operation that waits (a pull, a take): the transport may make it when asked. */
  get signal(): AbortSignal {
    return this.request.signal;
  }

  clientGone(): boolean {
    return hasClientGone(this.request);
  }
}
