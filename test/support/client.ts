// A minimal JSON client for the HTTP binding, as a user's code would write it.

export interface ApiReply<T = any> {
  readonly status: number;
  readonly body: T;
  readonly headers: Headers;
}

export async function call<T = any>(
  base: string,
  method: 'GET' | 'POST' | string,
  path: string,
  options: { body?: unknown; token?: string; headers?: Record<string, string>; rawBody?: string } = {},
): Promise<ApiReply<T>> {
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
export async function createMonitor(base: string, body: Record<string, unknown> = {}) {
  const reply = await call(base, 'POST', '/monitors', { body });
  if (reply.status !== 201) throw new Error(`create failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return { id: reply.body.monitor.id as string, ownerToken: reply.body.owner_token as string, reply };
}

export async function publish(base: string, monitor: string, token: string, observation: Record<string, unknown>) {
  return call(base, 'POST', `/monitors/${encodeURIComponent(monitor)}/observations`, { body: observation, token });
}

export async function subscribe(base: string, body: Record<string, unknown>, token?: string) {
  const reply = await call(base, 'POST', '/subscriptions', { body, token });
  if (reply.status !== 201 && reply.status !== 200) throw new Error(`subscribe failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return { id: reply.body.subscription.id as string, token: reply.body.token as string, reply };
}

/** Every observation from seq `from` on, read through a subscription with replay cursors (the stored cursor does not move). */
export async function replayAll(base: string, sub: { id: string; token: string }, from = 1): Promise<any[]> {
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
