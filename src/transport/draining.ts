// A server stopping (SIGTERM) answers what it has started and refuses what
// comes after: requests in progress finish, a request arriving on a kept-alive
// connection once the drain began is answered 503 with Retry-After (another
// node, or this one restarted, will take it), and the close waits until every
// started request has its answer.
import { ProtocolError } from '../protocol/errors.ts';
import { errorResponse } from './http-door.ts';
import type { HttpHandler } from './http-types.ts';

export class Draining {
  private inFlight = 0;
  private draining = false;
  private readonly idleWaiters: Array<() => void> = [];

  wrap(handler: HttpHandler): HttpHandler {
    return async (request) => {
      if (this.draining) {
        return errorResponse(new ProtocolError('STORE_UNAVAILABLE', 'This server is shutting down; nothing was changed. Send the request to another node, or again once it is back.'));
      }
      this.inFlight++;
      try {
        return await handler(request);
      } finally {
        this.inFlight--;
        if (this.inFlight === 0) for (const waiter of this.idleWaiters.splice(0)) waiter();
      }
    };
  }

  /** From now on new requests are refused; resolves once the started ones are answered, or after `limitMs`. */
  async drain(limitMs: number): Promise<number> {
    this.draining = true;
    if (this.inFlight === 0) return 0;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => this.idleWaiters.push(resolve)),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, limitMs);
      }),
    ]);
    clearTimeout(timer);
    return this.inFlight;
  }
}
