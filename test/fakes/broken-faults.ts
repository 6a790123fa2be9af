// Three servers that are each wrong in exactly one way, as proxy faults.
import type { Fault, Json, ProxiedRequest } from './broken-proxy.ts';

const segments = (req: ProxiedRequest) => new URL(req.path, 'http://x').pathname.split('/').slice(3);

/** (a) Ignores the stored cursor: every pull and stream replays from the start. */
export const ignoresStoredCursor: Fault = {
  name: 'ignores the stored cursor',
  request(req) {
    const [kind, , action] = segments(req);
    if (kind !== 'subscriptions' || (action !== 'pull' && action !== 'stream')) return;
    const url = new URL(req.path, 'http://x');
    if (url.searchParams.has('cursor') || req.headers['last-event-id']) return;
    url.searchParams.set('cursor', '0');
    req.path = `${url.pathname}${url.search}`;
  },
};

/**
 * (b) No authentication: a request on a monitor or subscription whose bearer
 * is missing or wrong gets the right token injected, so everything is allowed.
 */
export function noAuthentication(): Fault {
  const ownerTokens = new Map<string, string>();
  const subscriptionTokens = new Map<string, string>();
  return {
    name: 'no authentication',
    request(req) {
      const [kind, id] = segments(req);
      const known =
        kind === 'monitors' && id
          ? ownerTokens.get(id)
          : kind === 'subscriptions' && id
            ? subscriptionTokens.get(id)
            : kind === 'subscriptions' && req.method === 'POST'
              ? ownerTokens.get(req.json?.monitor)
              : undefined;
      const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
      if (known && bearer !== known && !(kind === 'subscriptions' && !id && bearer)) req.headers.authorization = `Bearer ${known}`;
    },
    response(req, status, body) {
      const [kind, id, action] = segments(req);
      if (kind === 'monitors' && !id && status === 201) ownerTokens.set(body.monitor.id, body.owner_token);
      if (kind === 'subscriptions' && !id && (status === 201 || status === 200)) subscriptionTokens.set(body.subscription.id, body.token);
      if (kind === 'subscriptions' && action === 'renew' && status === 200) subscriptionTokens.set(id!, body.token);
      return { status, body };
    },
  };
}

const vocabularies: Record<string, readonly string[]> = {
  tier: ['src', 'measured', 'derived', 'unverified', 'falsified'],
  origin: ['human', 'agent', 'webhook', 'probe', 'system'],
  verification: ['human_verified', 'machine_verified', 'certified', 'reported', 'unverified'],
  horizon: ['event', 'minute', 'hour', 'day', 'week', 'month'],
  visibility: ['private', 'shared', 'public'],
};
const servedAs: Record<string, string> = { verification: 'verified' };

const swaps = new WeakMap<ProxiedRequest, Record<string, string>>();

/**
 * (c) Stores values outside the vocabularies: an unknown closed value is
 * swapped for a valid one on the way in and shown back as sent, with 201.
 */
export const acceptsUnknownVocabulary: Fault = {
  name: 'stores values outside the vocabularies',
  request(req) {
    if (req.method !== 'POST' || typeof req.json !== 'object' || req.json === null) return;
    const swapped: Record<string, string> = {};
    const fix = (o: Json) => {
      if (typeof o !== 'object' || o === null) return;
      for (const [field, allowed] of Object.entries(vocabularies)) {
        if (typeof o[field] === 'string' && !allowed.includes(o[field])) {
          swapped[field] = o[field];
          o[field] = field === 'visibility' ? 'private' : field === 'horizon' ? 'event' : field === 'tier' ? 'unverified' : field === 'origin' ? 'agent' : 'unverified';
        }
      }
      if (o.source && typeof o.source.kind === 'string' && !['shell', 'ws', 'http', 'file', 'feed', 'cir', 'formula', 'log'].includes(o.source.kind)) o.source.kind = 'log';
      if (Array.isArray(o.capabilities)) o.capabilities = o.capabilities.filter((c: string) => ['observe', 'react', 'act'].includes(c));
    };
    fix(req.json);
    fix(req.json.patch);
    if (Array.isArray(req.json.observations)) for (const o of req.json.observations) fix(o);
    swaps.set(req, swapped);
  },
  response(req, status, body) {
    const swapped = swaps.get(req) ?? {};
    const shown = body?.observation ?? body?.monitor;
    if (shown) for (const [field, value] of Object.entries(swapped)) shown[servedAs[field] ?? field] = value;
    return { status, body };
  },
};

const detailKeys = ['relist', 'requested', 'retired', 'idempotent', 'ok', 'seq', 'dead_letter', 'cursor_kept'];

/**
 * (d) Speaks protocol 0.1 without the §17 reply details: the extra fields are
 * dropped, a retired token is 409 UNAVAILABLE and a re-subscribe answers 200.
 */
export const lacksReplyDetails: Fault = {
  name: 'lacks the §17 reply details',
  response(req, status, body) {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return { status, body };
    const [kind, id, action] = segments(req);
    const isPublish = kind === 'monitors' && action === 'observations';
    const stripped: Json = { ...body };
    if (!isPublish && !(kind === 'monitors' && action !== undefined)) for (const key of detailKeys) delete stripped[key];
    if (status === 404 && body.retired === true) return { status: 409, body: { code: 'UNAVAILABLE', error: body.error, live: false } };
    if (kind === 'subscriptions' && !id && status === 201 && body.subscription?.cursor > 1) return { status: 200, body: stripped };
    return { status, body: stripped };
  },
};
