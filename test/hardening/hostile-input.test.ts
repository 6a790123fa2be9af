// Hostile input, property-based (issue 4 point 5): random methods, paths,
// query strings, headers and bodies against every route of the HTTP binding
// (src/transport/http-routes.ts). For each request: no 5xx, an answer within
// the request timeout, a JSON {code, error} body on every 4xx, and when the
// request was refused the stored state did not change (apart from the
// `rejected` observation that records the refusal).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/service/operations.ts';
import { routes } from '../../src/transport/http-routes.ts';
import { call, createMonitor, publish, subscribe } from '../support/client.ts';
import { type ServerProcess, startServerProcess, transports } from '../support/server-process.ts';
import { scaled } from '../support/time-scale.ts';

const runs = 300;
const requestTimeoutMs = 10_000;
const admin = 'adm-hostile';
const allowedOrigin = 'http://allowed.example';
const rejectedType = 'ai.vigil.monitor.rejected';

interface World {
  monitor: { id: string; ownerToken: string };
  sub: { id: string; token: string };
  reader: { id: string; token: string };
}

// ---- arbitraries ----

const junk = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('', '%', '%zz', '%00', '..', '.', '%2F', '%2e%2e', '\u0000', '🦀', 'a'.repeat(300), '-1', '1e999', 'null'),
);

const numberish = fc.oneof(
  fc.integer({ min: -5, max: 5 }).map(String),
  fc.constantFrom('', '0', '-1', '1.5', '1e3', '9007199254740993', '0x10', ' 1', 'abc', '51', '1001', '99999999999999999999'),
);

/** Query values: never a valid non-zero `wait`, so no request waits on purpose. */
const queryPair = fc.oneof(
  fc.tuple(fc.constantFrom('wait', 'limit', 'cursor'), numberish),
  fc.tuple(fc.constantFrom('type', 'subject', 'tier', 'origin', 'actor', 'horizon', 'since', 'verified', 'from'), junk),
  fc.tuple(junk, junk),
);

const jsonBody = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
  {
    weight: 3,
    arbitrary: fc
      .dictionary(
        fc.constantFrom(
          'id', 'name', 'type', 'subject', 'data', 'tags', 'tier', 'origin', 'verification', 'actor', 'on_behalf_of', 'visibility',
          'horizon', 'capabilities', 'default_grant', 'source', 'types', 'filter', 'reason', 'patch', 'monitor', 'subscriber', 'from',
          'cursor', 'reset_policy', 'lease_duration_seconds', 'outcome', 'evidence', 'upto_seq', 'observations', 'registration_token',
          'retire_after_mute_seconds', 'ttl_seconds', 'supersedes', 'wasDerivedFrom', 'time', 'jsonrpc', 'method', 'params',
        ),
        fc.oneof(fc.jsonValue({ maxDepth: 3 }), junk, numberish.map(Number)),
        { maxKeys: 6 },
      )
      .map((v) => JSON.stringify(v)),
  },
  { weight: 1, arbitrary: junk },
  { weight: 1, arbitrary: fc.constantFrom('{', '[', '{"a":', '"\\ud800"', '{"a":1}{"b":2}', `${'['.repeat(200)}${']'.repeat(200)}`, '\ufeff{}') },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b).toString('latin1')) },
);

const rpcBody = fc
  .record({
    jsonrpc: fc.constantFrom('2.0', '1.0', undefined),
    id: fc.oneof(fc.integer(), fc.string({ maxLength: 5 }), fc.constant(null), fc.constant(undefined)),
    method: fc.oneof(fc.constantFrom(...Object.keys(operations)), junk),
    params: fc.oneof(fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }), fc.jsonValue({ maxDepth: 2 })),
  })
  .map((r) => JSON.stringify(r));

const headerValue = fc
  .string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 60 })
  .chain((v) => fc.constantFrom(v, `${v} ${v}`, `Bearer ${v}`, `Basic ${v}`, ''));
const extraHeaders = fc.dictionary(
  fc.oneof(
    fc.constantFrom('last-event-id', 'accept', 'accept-encoding', 'x-forwarded-for', 'x-forwarded-host', 'forwarded', 'cookie', 'if-none-match', 'range', 'expect'),
    fc.stringMatching(/^x-[a-z0-9-]{1,20}$/),
  ),
  headerValue,
  { maxKeys: 3 },
);

interface Shape {
  method: string;
  headers: Record<string, string>;
  path: string;
  query: [string, string][];
  auth: 'none' | 'owner' | 'sub' | 'admin' | 'junk' | 'mangled';
  origin: 'none' | 'allowed' | 'other';
  contentType: string | undefined;
  body: string | undefined;
}

function shapeArbitrary(world: () => World) {
  const routeIndex = fc.integer({ min: 0, max: routes.length - 1 });
  const segmentValue = fc.oneof(
    { weight: 4, arbitrary: fc.constant<'real'>('real') },
    { weight: 2, arbitrary: junk.map((j) => ({ junk: j })) },
  );
  return fc
    .record({
      route: routeIndex,
      offRoute: fc.oneof({ weight: 9, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.array(junk, { maxLength: 4 }) }),
      method: fc.oneof({ weight: 8, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS') }),
      segments: fc.array(segmentValue, { minLength: 3, maxLength: 3 }),
      query: fc.array(queryPair, { maxLength: 4 }),
      auth: fc.constantFrom('none', 'owner', 'sub', 'admin', 'junk', 'mangled'),
      headers: extraHeaders,
      origin: fc.oneof({ weight: 8, arbitrary: fc.constant('none' as const) }, { weight: 1, arbitrary: fc.constantFrom('allowed' as const, 'other' as const) }),
      contentType: fc.constantFrom(undefined, 'application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'),
      body: fc.oneof({ weight: 6, arbitrary: jsonBody }, { weight: 2, arbitrary: rpcBody }, { weight: 1, arbitrary: fc.constant(undefined) }),
    })
    .map((r): Shape => {
      const route = routes[r.route]!;
      let path: string;
      if (r.offRoute) path = `/mp/v0/${r.offRoute.map((s) => encodeURIComponent(s)).join('/')}`;
      else {
        let param = 0;
        const w = world();
        path = `/mp/v0/${route.segments
          .map((s) => {
            if (!s.startsWith(':')) return s;
            const pick = r.segments[param++]!;
            if (pick !== 'real') return encodeURIComponent(pick.junk);
            return s === ':id' ? w.monitor.id : w.sub.id;
          })
          .join('/')}`;
      }
      const method = r.method ?? route.method;
      const hasBody = method !== 'GET' && r.body !== undefined;
      return {
        method,
        headers: r.headers,
        path,
        query: r.query,
        auth: r.auth,
        origin: r.origin,
        contentType: hasBody ? r.contentType : undefined,
        body: hasBody ? r.body : undefined,
      };
    });
}

// ---- the stored state, as far as a refusal could have changed it ----

async function fingerprint(base: string, world: World) {
  const snapshot = await call(base, 'GET', '/admin/snapshot', { token: admin });
  const monitor = await call(base, 'GET', `/monitors/${world.monitor.id}`, { token: world.monitor.ownerToken });
  const observations: string[] = [];
  let cursor = 1;
  for (;;) {
    const page = await call(base, 'GET', `/subscriptions/${world.reader.id}/pull?limit=1000&cursor=${cursor}`, { token: world.reader.token });
    expect(page.status).toBe(200);
    for (const o of page.body.observations) if (o.type !== rejectedType) observations.push(`${o.id} ${o.type} ${JSON.stringify(o.data.payload ?? o.data)}`);
    if (page.body.observations.length === 0 || page.body.next > page.body.head) break;
    cursor = page.body.next;
  }
  const sub = await call(base, 'GET', `/subscriptions/${world.sub.id}/pull?limit=1`, { token: world.sub.token });
  const { head: _head, updated: _updated, last: _last, ...definition } = monitor.body ?? {};
  return {
    monitors: snapshot.body.monitors,
    subscriptions: snapshot.body.subscriptions_active,
    definition: monitor.status === 200 ? JSON.stringify(definition) : monitor.status,
    observations,
    subCursor: sub.status === 200 ? sub.body.cursor : `status ${sub.status}`,
  };
}

async function send(base: string, world: World, shape: Shape) {
  // "expect: 100-continue" is refused by fetch itself, not by the server.
  const headers: Record<string, string> = Object.fromEntries(Object.entries(shape.headers).filter(([k]) => k !== 'expect'));
  const token = { none: undefined, owner: world.monitor.ownerToken, sub: world.sub.token, admin, junk: 'vgo_not-a-token', mangled: undefined }[shape.auth];
  if (token) headers.authorization = `Bearer ${token}`;
  if (shape.auth === 'mangled') headers.authorization = `bearer  ${world.monitor.ownerToken} extra`;
  if (shape.origin !== 'none') headers.origin = shape.origin === 'allowed' ? allowedOrigin : 'http://other.example';
  if (shape.contentType) headers['content-type'] = shape.contentType;
  const query = new URLSearchParams(shape.query).toString();
  const url = `${base.slice(0, -'/mp/v0'.length)}${shape.path}${query ? `?${query}` : ''}`;
  const started = Date.now();
  const response = await fetch(url, { method: shape.method, headers, body: shape.body, signal: AbortSignal.timeout(requestTimeoutMs) });
  const type = response.headers.get('content-type') ?? '';
  let body: any;
  if (type.startsWith('text/event-stream')) await response.body?.cancel();
  else {
    const text = await response.text();
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
  }
  return { status: response.status, body, type, ms: Date.now() - started };
}

describe.each(transports)('hostile input over %s', (transport) => {
  let server: ServerProcess;
  let world: World;
  beforeAll(async () => {
    server = await startServerProcess({ transport, args: [`--allow-admin=${admin}`, '--allow-origin', allowedOrigin] });
    const monitor = await createMonitor(server.base, { id: 'target', capabilities: ['observe', 'act'], types: ['app.job'] });
    for (const subject of ['job-1', 'job-2']) await publish(server.base, monitor.id, monitor.ownerToken, { type: 'app.job', subject });
    const sub = await subscribe(server.base, { monitor: monitor.id, subscriber: 'agent:worker', capabilities: ['act'] }, monitor.ownerToken);
    await call(server.base, 'POST', `/subscriptions/${sub.id}/leases/claim`, { token: sub.token, body: { subject: 'job-1', lease_duration_seconds: 3600 } });
    const reader = await subscribe(server.base, { monitor: monitor.id, subscriber: 'agent:auditor' }, monitor.ownerToken);
    world = { monitor, sub, reader };
  });
  afterAll(() => server?.stop());

  it(`${runs} random requests: no 5xx, no hang, JSON errors, refusals change nothing`, async () => {
    let refused = 0;
    // The state after a refusal, checked equal to the state before it: nothing has changed it since,
    // so it is the next request's "before" without reading it again (most requests are refused).
    // Unset after a request that was not refused and after any failure (fast-check then shrinks).
    let unchanged: Awaited<ReturnType<typeof fingerprint>> | undefined;
    await fc.assert(
      fc.asyncProperty(
        shapeArbitrary(() => world),
        async (shape) => {
          const before = unchanged ?? (await fingerprint(server.base, world));
          unchanged = undefined;
          const reply = await send(server.base, world, shape);
          const what = `${shape.method} ${shape.path} → ${reply.status} ${JSON.stringify(reply.body)?.slice(0, 300)}`;
          expect(reply.status, what).toBeLessThan(500);
          expect(reply.ms, what).toBeLessThan(requestTimeoutMs);
          if (reply.status >= 400) {
            refused++;
            expect(reply.type, what).toMatch(/^application\/json/);
            // JSON-RPC refuses a whole request in its own envelope, with the error body as `data` (§14).
            const error = shape.path === '/mp/v0/rpc' && reply.body?.jsonrpc === '2.0' ? reply.body.error?.data : reply.body;
            expect(typeof error?.code, what).toBe('string');
            expect(typeof error?.error, what).toBe('string');
          }
          const rpcReplies = shape.path === '/mp/v0/rpc' && reply.status === 200 ? [reply.body].flat() : [];
          for (const r of rpcReplies) expect(r?.error?.data?.code, what).not.toBe('STORE_UNAVAILABLE');
          const rpcRefused = rpcReplies.length > 0 && rpcReplies.every((r) => r?.error !== undefined);
          if (reply.status >= 400 || rpcRefused) {
            const after = await fingerprint(server.base, world);
            expect(after, what).toEqual(before);
            unchanged = after;
          } else if (shape.path === `/mp/v0/subscriptions/${world.sub.id}/renew` && reply.status === 200) {
            world.sub = { id: world.sub.id, token: reply.body.token }; // a valid renew voids the old token
          }
        },
      ),
      { numRuns: runs, interruptAfterTimeLimit: 50_000 },
    );
    expect(refused).toBeGreaterThan(runs / 2);
    // The server is still healthy afterwards.
    expect((await call(server.base, 'GET', '/admin/snapshot', { token: admin })).body.health.ok).toBe(true);
  }, scaled(90_000));
});
