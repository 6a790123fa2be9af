// A minimal JSON client for the HTTP binding, as a user's code would write it.
// Every helper takes where the server is: its base URL (a real socket), or an
// in-process door (test/support/door.ts), so one test body runs on either.

export interface ApiReply<T = any> {
  readonly status: number;
  readonly body: T;
  readonly headers: Headers;
}

/** An in-process door: what test/support/door.ts's openDoor() returns. */
export interface InProcess {
  request(method: string, path: string, options?: { body?: unknown; token?: string; headers?: Record<string, string> }): Promise<{ status: number; body: any; headers: Readonly<Record<string, string>> }>;
}

/** A server's base URL (…/mp/v0), or a door without a socket. */
export type Base = string | InProcess;

export async function call<T = any>(
  base: Base,
  method: 'GET' | 'POST' | string,
  path: string,
  options: { body?: unknown; token?: string; headers?: Record<string, string>; rawBody?: string } = {},
): Promise<ApiReply<T>> {
  if (typeof base !== 'string') {
    const reply = await base.request(method, path, { ...options, body: options.rawBody ?? options.body });
    return { status: reply.status, body: reply.body as T, headers: new Headers(reply.headers) };
  }
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  const response = await fetch(`${base}${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // Left as text: the test decides whether that is acceptable.
  }
  return { status: response.status, body: parsed as T, headers: response.headers };
}

/** Creates a monitor and returns its id and owner token. */
export async function createMonitor(base: Base, body: Record<string, unknown> = {}) {
  const reply = await call(base, 'POST', '/monitors', { body });
  if (reply.status !== 201) throw new Error(`create failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return { id: reply.body.monitor.id as string, ownerToken: reply.body.owner_token as string, reply };
}

export async function publish(base: Base, monitor: string, token: string, observation: Record<string, unknown>) {
  return call(base, 'POST', `/monitors/${encodeURIComponent(monitor)}/observations`, { body: observation, token });
}

export async function subscribe(base: Base, body: Record<string, unknown>, token?: string) {
  const reply = await call(base, 'POST', '/subscriptions', { body, token });
  if (reply.status !== 201 && reply.status !== 200) throw new Error(`subscribe failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return { id: reply.body.subscription.id as string, token: reply.body.token as string, reply };
}

/** Every observation from seq `from` on, read through a subscription with replay cursors (the stored cursor does not move). */
export async function replayAll(base: Base, sub: { id: string; token: string }, from = 1): Promise<any[]> {
  const out: any[] = [];
  let cursor = from;
  for (;;) {
    const page = await call(base, 'GET', `/subscriptions/${sub.id}/pull?limit=1000&cursor=${cursor}`, { token: sub.token });
    if (page.status !== 200) throw new Error(`pull failed: ${page.status} ${JSON.stringify(page.body)}`);
    out.push(...page.body.observations);
    if (page.body.observations.length === 0 || page.body.next > page.body.head) return out;
    cursor = page.body.next;
  }
}
