/**
 * What an operation answers: the HTTP status and the body every door sends.
 * A body given as a function is rendered after the commit, so that heads,
 * lags and counters in it include what the operation itself wrote.
 */
export interface Reply {
  readonly status: number;
  readonly body: unknown;
}

export function renderReply(reply: Reply): Reply {
  return typeof reply.body === 'function' ? { status: reply.status, body: (reply.body as () => unknown)() } : reply;
}
