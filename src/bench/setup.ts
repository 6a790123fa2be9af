// Setting a server up for a run, through the protocol only: read what each
// node says of itself (/discover), create the run's monitor (or use one the
// user names), publish the subjects, subscribe the clients, and retire the
// monitor at the end. None of it is measured.
import type { TargetSpec } from './spec.ts';
import { Wire, type WireReply } from './wire.ts';

export class BenchSetupError extends Error {
  override readonly name = 'BenchSetupError';
}

export interface ServerFacts {
  readonly root: string;
  /** serverInfo name and version, as the server gives them. */
  readonly software: string;
  /** Lease extensions it lists (protocol.md §21). */
  readonly extensions: readonly string[];
  /** A cluster node's id, when it names one. */
  readonly node: string | undefined;
}

/** What every scenario's figures start with. */
export interface RunHeader {
  /** Stopped by Ctrl-C: the figures are of what ran. */
  interrupted: boolean;
  seed: number;
  servers: ServerFacts[];
  monitor: string;
  flags: Record<string, string | number>;
  startedAt: string;
  elapsedSeconds: number;
  /** The server lost the run's monitor or subscriptions mid-run (lost-state.ts): the run ended there. */
  lostState?: string;
}

export interface Target {
  readonly servers: readonly ServerFacts[];
  /** Extensions every node lists: only those are used. */
  readonly extensions: ReadonlySet<string>;
  readonly monitor: string;
  readonly ownerToken: string;
  /** Whether this run created the monitor (and so retires it). */
  readonly created: boolean;
}

export interface Subscription {
  readonly id: string;
  readonly token: string;
}

const describe = (what: string, reply: WireReply) =>
  `${what}: ${reply.status === 0 ? `no answer (${reply.code})` : `HTTP ${reply.status} ${typeof reply.body === 'object' ? JSON.stringify(reply.body).slice(0, 300) : String(reply.body ?? '').slice(0, 300)}`}`;

export async function discover(wire: Wire, roots: readonly string[]): Promise<ServerFacts[]> {
  return Promise.all(
    roots.map(async (root) => {
      const reply = await wire.request(root, 'GET', '/discover');
      if (reply.status !== 200 || typeof reply.body !== 'object' || reply.body === null) {
        throw new BenchSetupError(describe(`${root}/discover does not answer as a monitor-protocol server`, reply));
      }
      const info = reply.body.serverInfo ?? {};
      const extensions = Array.isArray(reply.body.extensions) ? reply.body.extensions.filter((e: unknown) => typeof e === 'string') : [];
      const node = typeof reply.body.node?.id === 'string' ? reply.body.node.id : undefined;
      return { root, software: `${info.name ?? 'unknown'} ${info.version ?? ''}`.trim(), extensions, node };
    }),
  );
}

/** Creates the run's monitor with the capabilities it needs, or checks the one the user named. */
export async function prepareTarget(wire: Wire, spec: TargetSpec, name: string, capabilities: string[]): Promise<Target> {
  const servers = await discover(wire, spec.bases);
  const extensions = new Set(servers[0]!.extensions.filter((e) => servers.every((s) => s.extensions.includes(e))));
  const root = spec.bases[0]!;
  if (spec.monitor !== undefined) {
    const reply = await wire.request(root, 'GET', `/monitors/${encodeURIComponent(spec.monitor)}`, undefined, spec.ownerToken);
    if (reply.status !== 200) throw new BenchSetupError(describe(`monitor "${spec.monitor}" cannot be read with --owner-token`, reply));
    const monitor = reply.body.monitor ?? reply.body;
    const missing = capabilities.filter((c) => !(monitor.capabilities ?? []).includes(c));
    if (missing.length > 0) throw new BenchSetupError(`monitor "${spec.monitor}" lacks the capabilities ${missing.join(', ')} this scenario needs; create it with capabilities ${JSON.stringify(capabilities)}.`);
    return { servers, extensions, monitor: spec.monitor, ownerToken: spec.ownerToken!, created: false };
  }
  const body: Record<string, unknown> = {
    id: `bench-${name}-${spec.seed.toString(16)}-${Math.random().toString(16).slice(2, 8)}`,
    name: `vigil bench ${name}`,
    description: `Created by vigil bench ${name} (seed ${spec.seed}); retired when the run ends.`,
    capabilities,
    default_grant: ['observe'],
  };
  if (spec.registrationToken !== undefined) body.registration_token = spec.registrationToken;
  const reply = await wire.request(root, 'POST', '/monitors', body, spec.registrationToken);
  if (reply.status !== 201 || typeof reply.body?.owner_token !== 'string') {
    const hint = reply.status === 401 || reply.status === 403 ? ' (a server that requires registration needs --registration-token)' : '';
    throw new BenchSetupError(describe(`creating the bench monitor on ${root} failed${hint}`, reply));
  }
  return { servers, extensions, monitor: reply.body.monitor?.id ?? body.id, ownerToken: reply.body.owner_token, created: true };
}

/** Publishes one observation per subject (batches of up to 1000; single publishes where batches are refused). */
export async function publishSubjects(wire: Wire, root: string, target: Target, subjects: readonly string[], type = 'bench.work'): Promise<void> {
  const path = `/monitors/${encodeURIComponent(target.monitor)}/observations`;
  for (let i = 0; i < subjects.length; i += 1000) {
    const chunk = subjects.slice(i, i + 1000);
    const reply = await wire.request(root, 'POST', path, { observations: chunk.map((subject) => ({ type, subject, data: {} })) }, target.ownerToken);
    if (reply.status === 201) continue;
    if (reply.status !== 400 && reply.status !== 413) throw new BenchSetupError(describe('publishing the subjects failed', reply));
    await inParallel(chunk, 16, async (subject) => {
      const one = await wire.request(root, 'POST', path, { type, subject, data: {} }, target.ownerToken);
      if (one.status !== 201) throw new BenchSetupError(describe(`publishing subject "${subject}" failed`, one));
    });
  }
}

export async function subscribe(wire: Wire, root: string, target: Target, subscriber: string, capabilities: string[]): Promise<Subscription | WireReply> {
  const reply = await wire.request(root, 'POST', '/subscriptions', { monitor: target.monitor, subscriber, capabilities, from: 'head' }, target.ownerToken);
  if (reply.status !== 201 || typeof reply.body?.token !== 'string') return reply;
  return { id: reply.body.subscription?.id ?? reply.body.id, token: reply.body.token };
}

/** Subscribes `count` subscribers, `parallel` at a time, spreading the requests over the nodes. */
export async function subscribeMany(wire: Wire, roots: readonly string[], target: Target, count: number, prefix: string, capabilities: string[]): Promise<Subscription[]> {
  const subs: Subscription[] = new Array(count);
  await inParallel(
    Array.from({ length: count }, (_, i) => i),
    32,
    async (i) => {
      const reply = await subscribe(wire, roots[i % roots.length]!, target, `${prefix}-${i}`, capabilities);
      if (!('id' in reply)) throw new BenchSetupError(describe(`subscribing ${prefix}-${i} failed`, reply));
      subs[i] = reply;
    },
  );
  return subs;
}

/** The monitor's head (highest seq), for opening streams just after it. */
export async function head(wire: Wire, root: string, target: Target): Promise<number> {
  const reply = await wire.request(root, 'GET', `/monitors/${encodeURIComponent(target.monitor)}`, undefined, target.ownerToken);
  const value = Number(reply.body?.monitor?.head ?? reply.body?.head);
  if (reply.status !== 200 || !Number.isSafeInteger(value)) throw new BenchSetupError(describe('reading the monitor head failed', reply));
  return value;
}

/** Retires the monitor this run created (its subscriptions go with it); a failure is only reported. */
export async function retire(wire: Wire, root: string, target: Target): Promise<string | undefined> {
  if (!target.created) return undefined;
  const reply = await wire.request(root, 'POST', `/monitors/${encodeURIComponent(target.monitor)}/retire`, { reason: 'vigil bench: the run ended' }, target.ownerToken);
  return reply.status === 200 ? undefined : describe(`retiring monitor ${target.monitor} failed`, reply);
}

export async function inParallel<T>(items: readonly T[], parallel: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, items.length) }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

/**
 * A scenario's whole life on the wire: its monitor prepared, `use` run, and
 * the monitor retired (unless --keep) and the connections closed, however it ends.
 */
export async function withTarget<T>(
  spec: TargetSpec,
  scenario: string,
  capabilities: string[],
  connections: number,
  step: (line: string) => void,
  use: (wire: Wire, target: Target) => Promise<T>,
): Promise<T> {
  const wire = new Wire(connections, spec.timeoutMs);
  try {
    const target = await prepareTarget(wire, spec, scenario, capabilities);
    try {
      return await use(wire, target);
    } finally {
      if (!spec.keep) {
        const failed = await retire(wire, spec.bases[0]!, target);
        if (failed) step(`note: ${failed}`);
      }
    }
  } finally {
    await wire.close();
  }
}
