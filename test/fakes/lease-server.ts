// A small monitor-protocol server of its own (not Vigil) that speaks just
// what `vigil bench leases` uses: discover, monitors, batch publishes,
// subscriptions and the five lease calls, with leases kept in a map. It lists
// no extensions unless asked to list leases.fence (then every grant carries a
// fence, a call naming another is refused, and it counts the calls that came
// with one and without). Healthy by default; each fault breaks the one-holder
// rule in one way:
//   double-grant  — every third claim of a subject someone else holds is
//                   granted anyway (the new holder overwrites the old);
//   late-complete — a complete or release by a former holder whose lease has
//                   expired is accepted (a healthy server refuses LEASE_LOST).
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type LeaseFault = 'none' | 'double-grant' | 'late-complete';

export interface LeaseServer {
  readonly url: string;
  /** How often the fault fired. */
  readonly faults: () => number;
  /** Renew, complete, release and reject calls that carried a fence, and that did not. */
  readonly fences: () => { with: number; without: number };
  close(): Promise<void>;
}

interface Lease {
  holder: string | null;
  expires: number;
  fence: number;
  /** Every holder the subject had, for late-complete. */
  former: Set<string>;
}

export async function startLeaseServer(fault: LeaseFault, options: { fence?: boolean } = {}): Promise<LeaseServer> {
  const fencing = options.fence === true;
  const fenceCalls = { with: 0, without: 0 };
  let nextFence = 1;
  const owners = new Map<string, string>();
  const subjects = new Map<string, Set<string>>();
  const subscriptions = new Map<string, { token: string; monitor: string }>();
  const leases = new Map<string, Lease>();
  let heldClaims = 0;
  let fired = 0;
  const id = (prefix: string) => `${prefix}${randomBytes(6).toString('hex')}`;

  const send = (res: ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  const refuse = (res: ServerResponse, status: number, code: string, extra: Record<string, unknown> = {}) => send(res, status, { code, error: code, ...extra });
  const bearer = (req: IncomingMessage) => /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];

  function lease(res: ServerResponse, sub: string, op: string, body: Record<string, unknown>) {
    const subscription = subscriptions.get(sub)!;
    const subject = String(body.subject);
    if (!subjects.get(subscription.monitor)?.has(subject)) return refuse(res, 404, 'NOT_FOUND');
    const key = `${subscription.monitor}\u0000${subject}`;
    const now = Date.now();
    const holder = `sub:${sub}`;
    const current = leases.get(key) ?? { holder: null, expires: 0, fence: 0, former: new Set<string>() };
    leases.set(key, current);
    const live = current.holder !== null && now < current.expires;
    const duration = Number(body.lease_duration_seconds ?? 300) * 1000;
    const served = () => ({ subject, holder: current.holder, expires: new Date(current.expires).toISOString(), state: current.holder ? 'held' : 'free', ...(fencing ? { fence: current.fence } : {}) });
    if (op !== 'claim') {
      if (body.fence === undefined) fenceCalls.without++;
      else fenceCalls.with++;
    }
    if (op === 'claim') {
      if (live && current.holder === holder) return send(res, 200, { lease: served(), expires: new Date(current.expires).toISOString(), idempotent: true });
      if (live) {
        heldClaims++;
        if (!(fault === 'double-grant' && heldClaims % 3 === 0)) return refuse(res, 409, 'LEASE_HELD', { holder: current.holder });
        fired++;
      }
      current.holder = holder;
      // now is cut down to the millisecond: the lease lasts its duration from the next one (as Vigil's).
      current.expires = now + 1 + duration;
      current.fence = nextFence++;
      current.former.add(holder);
      return send(res, 201, { lease: served(), expires: new Date(current.expires).toISOString(), idempotent: false, ...(fencing ? { fence: current.fence } : {}) });
    }
    if (!fencing && body.fence !== undefined) return refuse(res, 400, 'INVALID', { error: 'unknown field "fence"' });
    const mine = live && current.holder === holder && (body.fence === undefined || body.fence === current.fence);
    if (!mine) {
      const lateAccepted = fault === 'late-complete' && (op === 'complete' || op === 'release') && current.former.has(holder);
      if (!lateAccepted) return refuse(res, 409, 'LEASE_LOST', { holder: live ? current.holder : null });
      fired++;
      return send(res, 200, { ok: true, lease: served() });
    }
    if (op === 'renew') {
      current.expires = now + 1 + duration;
      return send(res, 200, { lease: served(), expires: new Date(current.expires).toISOString() });
    }
    current.holder = null;
    current.expires = 0;
    return send(res, 200, { ok: true, lease: served() });
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: Record<string, unknown> = {};
      try {
        if (chunks.length) body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return refuse(res, 400, 'INVALID');
      }
      const path = (req.url ?? '/').split('?')[0]!.replace(/^\/mp\/v0/, '').split('/').slice(1);
      const [kind, first, second, third] = path;
      if (req.method === 'GET' && kind === 'discover') {
        return send(res, 200, { protocol: 'monitor-protocol', supportedVersions: ['0.1'], serverInfo: { name: 'lease-fixture', version: fault }, ...(fencing ? { extensions: ['leases.fence'] } : {}) });
      }
      if (req.method !== 'POST') return refuse(res, 404, 'NOT_FOUND');
      if (kind === 'monitors' && first === undefined) {
        const monitor = String(body.id ?? id('mon-'));
        const token = id('tok_');
        owners.set(monitor, token);
        subjects.set(monitor, new Set());
        return send(res, 201, { monitor: { id: monitor, capabilities: body.capabilities ?? ['observe'] }, owner_token: token });
      }
      if (kind === 'monitors' && first !== undefined) {
        if (owners.get(first) !== bearer(req)) return refuse(res, 401, 'UNAUTHORIZED');
        if (second === 'retire') return send(res, 200, { monitor: { id: first, status: 'retired' } });
        if (second !== 'observations') return refuse(res, 404, 'NOT_FOUND');
        const list = Array.isArray(body.observations) ? body.observations : [body];
        for (const o of list) if (typeof o.subject === 'string') subjects.get(first)!.add(o.subject);
        return send(res, 201, { seqs: list.map((_: unknown, i: number) => i + 1) });
      }
      if (kind === 'subscriptions' && first === undefined) {
        const monitor = String(body.monitor);
        if (owners.get(monitor) !== bearer(req)) return refuse(res, 401, 'UNAUTHORIZED');
        const sub = id('sub-');
        const token = id('st_');
        subscriptions.set(sub, { token, monitor });
        return send(res, 201, { subscription: { id: sub, monitor }, token });
      }
      if (kind === 'subscriptions' && second === 'leases' && third !== undefined) {
        if (subscriptions.get(first!)?.token !== bearer(req)) return refuse(res, 401, 'UNAUTHORIZED');
        if (!['claim', 'renew', 'complete', 'release', 'reject'].includes(third)) return refuse(res, 404, 'NOT_FOUND');
        return lease(res, first!, third, body);
      }
      return refuse(res, 404, 'NOT_FOUND');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    faults: () => fired,
    fences: () => ({ ...fenceCalls }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
