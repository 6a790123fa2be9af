// Monitor operations (§2-§7): discover, list, get, create, configure, state
// and publish.
import { randomBytes } from 'node:crypto';
import type { ConfigureAction, MonitorEvent, MonitorPatch } from '../machines/monitor-machine.ts';
import { ProtocolError, invalid, unauthorized } from '../protocol/errors.ts';
import { parseFilter } from '../protocol/filter.ts';
import type { ObservationDraft } from '../protocol/observation.ts';
import { type ProvenanceClaims, resolveProvenance } from '../protocol/provenance.ts';
import { RawJson } from '../protocol/raw-json.ts';
import { isoTime } from '../protocol/wire-values.ts';
import { validate } from '../protocol/validate.ts';
import {
  type Capability,
  extensionName,
  type Horizon,
  leaseExtensions,
  observationTypes,
  protocolTypes,
  protocolVersion,
  serverOnlyTypes,
  type Visibility,
} from '../protocol/vocabulary.ts';
import type { MonitorBudget, MonitorCadence, MonitorDefinition, MonitorRule } from '../store/records.ts';
import { packageVersion } from '../version.ts';
import { type Caller, canSee, ownedFeed, visibleFeed } from './access.ts';
import { emptyStats, Feed } from './feed.ts';
import type { Reply } from './reply.ts';
import { servedLimits, servedMonitor } from './served.ts';
import { defaults } from './defaults.ts';
import { checkCadence, checkRules, defaultCadence } from './monitor-fields.ts';
import type { MonitorService } from './service.ts';
import { redactDeep } from '../net/redact.ts';
import { stateDocument } from './state-document.ts';
import { mintToken, secretMatches } from './tokens.ts';

// A server's discover reply changes only with its cluster's live nodes: the rest is written out once.
const discoverTexts = new WeakMap<MonitorService, RawJson>();

export function discover(service: MonitorService): Reply {
  if (service.cluster) return { status: 200, body: discoverBody(service) };
  let text = discoverTexts.get(service);
  if (!text) {
    text = new RawJson(JSON.stringify(discoverBody(service)));
    discoverTexts.set(service, text);
  }
  return { status: 200, body: text };
}

function discoverBody(service: MonitorService) {
  return {
    protocol: 'monitor-protocol',
    supportedVersions: [protocolVersion],
    serverInfo: { name: 'vigil', version: packageVersion },
    capabilities: {
      monitors: { publish: true },
      feeds: { pull: true, sse: true, mcp: true, http: false },
      leases: { delivery_count_limit: defaults.deliveryCountLimit },
      extensions: { [extensionName]: { version: protocolVersion } },
    },
    extensions: leaseExtensions,
    limits: servedLimits(service),
    ttlMs: defaults.ttlMs,
    ...(service.cluster ? { node: service.cluster.node, nodes: service.cluster.liveNodes() } : {}),
  };
}

export function listMonitors(service: MonitorService, caller: Caller): Reply {
  const monitors = [];
  for (const feed of service.allFeeds()) if (canSee(feed, caller)) monitors.push(servedMonitor(service, feed));
  return { status: 200, body: { monitors } };
}

export function getMonitor(service: MonitorService, input: unknown, caller: Caller): Reply {
  const { id } = validate<{ id: string }>('monitor-ref', input);
  return { status: 200, body: servedMonitor(service, visibleFeed(service, id, caller)) };
}

export function monitorState(service: MonitorService, input: unknown, caller: Caller): Reply {
  const { id } = validate<{ id: string }>('monitor-ref', input);
  return { status: 200, body: stateDocument(service, visibleFeed(service, id, caller)) };
}

interface CreateBody {
  id?: string;
  name?: string;
  description?: string | null;
  owner?: string;
  visibility?: Visibility;
  horizon?: Horizon;
  capabilities?: Capability[];
  default_grant?: Capability[];
  source?: MonitorDefinition['source'];
  types?: string[];
  filter?: Record<string, unknown>;
  ttl_seconds?: number | null;
  retire_after_mute_seconds?: number | null;
  cadence?: MonitorCadence;
  rules?: MonitorRule[];
  budget?: MonitorBudget | null;
  subscribe_token?: boolean;
  registration_token?: string;
  reason?: string | null;
}

function checkOwnFilter(filter: Record<string, unknown>, declared: readonly string[]): void {
  parseFilter(filter, { knownTypes: () => [...protocolTypes, ...declared] });
}

export function createMonitor(service: MonitorService, input: unknown, caller: Caller): Reply {
  const body = validate<CreateBody>('monitor-create', input);
  const required = service.options.registrationToken;
  if (required !== undefined) {
    const presented = body.registration_token ?? caller.bearer;
    if (!secretMatches(presented, required)) {
      throw unauthorized(
        'This server requires its registration token to create a monitor: send it as the bearer or as "registration_token".',
      );
    }
  }
  const id = body.id ?? `mon-${randomBytes(4).toString('hex')}`;
  if (required === undefined) service.clientLimits.admitCreate(caller.address);
  if (service.feed(id)) throw new ProtocolError('DUPLICATE', `A monitor with id "${id}" already exists; choose another id.`);
  const capabilities = body.capabilities ?? ['observe'];
  const defaultGrant = body.default_grant ?? (['observe'] as Capability[]).filter((c) => capabilities.includes(c));
  const outside = defaultGrant.filter((c) => !capabilities.includes(c));
  if (outside.length > 0) {
    throw invalid(`"default_grant" may only hold the monitor's capabilities (${capabilities.join(', ')}); ${outside.join(', ')} ${outside.length > 1 ? 'are' : 'is'} not among them.`, {
      field: 'default_grant',
    });
  }
  const types = body.types ?? [];
  const filter = body.filter ?? {};
  checkOwnFilter(filter, types);
  const rules = body.rules ?? [];
  checkRules(rules, () => [...protocolTypes, ...types]);
  checkCadence(body.cadence);
  const now = new Date(service.now()).toISOString();
  const definition: MonitorDefinition = {
    id,
    name: body.name ?? id,
    description: body.description ?? null,
    owner: body.owner ?? (required !== undefined ? 'human:owner' : 'agent:owner'),
    visibility: body.visibility ?? 'private',
    horizon: body.horizon ?? 'event',
    capabilities,
    default_grant: defaultGrant,
    source: service.sources?.check(body.source ?? { kind: 'log' }, caller) ?? body.source ?? { kind: 'log' },
    types,
    filter,
    ttl_seconds: body.ttl_seconds ?? null,
    retire_after_mute_seconds: body.retire_after_mute_seconds ?? null,
    cadence: body.cadence ?? defaultCadence,
    rules,
    budget: body.budget ?? null,
    attested: required !== undefined,
    version: 1,
    created: now,
    updated: now,
  };
  const owner = mintToken('owner');
  const subscribe = body.subscribe_token ? mintToken('subscribe') : undefined;
  const actor = service.system.addMonitor('active', definition);
  const feed = new Feed(service.allocateMonitorKey(), actor, owner.hash, subscribe?.hash ?? null, emptyStats());
  service.addFeed(feed);
  service.observations.recordBookkeeping(feed, observationTypes.configured, definition.owner, {
    action: 'create',
    reason: body.reason ?? null,
    diff: null,
  });
  service.sources?.changed(feed);
  return {
    status: 201,
    body: () => ({
      monitor: servedMonitor(service, feed),
      owner_token: owner.token,
      ...(subscribe ? { subscribe_token: subscribe.token } : {}),
    }),
  };
}

const configureEvents: Record<ConfigureAction, MonitorEvent['type']> = {
  update: 'UPDATE',
  pause: 'PAUSE',
  resume: 'RESUME',
  retire: 'RETIRE',
};

/**
 * An update may add capabilities (a sentinel needs `act` on a monitor made
 * with `observe` only) but not take one away: subscriptions already hold
 * what they were granted. `default_grant` stays within the capabilities.
 */
function checkCapabilityPatch(definition: MonitorDefinition, patch: MonitorPatch): void {
  const capabilities = patch.capabilities ?? definition.capabilities;
  const dropped = definition.capabilities.filter((c) => !capabilities.includes(c));
  if (dropped.length > 0) {
    throw invalid(
      `"capabilities" may add to the monitor's ${definition.capabilities.join(', ')} but not remove any (subscriptions hold them); ${dropped.join(', ')} ${dropped.length > 1 ? 'are' : 'is'} missing. Send every capability the monitor keeps, e.g. ${JSON.stringify([...new Set([...definition.capabilities, ...capabilities])])}.`,
      { field: 'patch.capabilities' },
    );
  }
  const grant = patch.default_grant ?? definition.default_grant;
  const outside = grant.filter((c) => !capabilities.includes(c));
  if (outside.length > 0) {
    throw invalid(`"default_grant" may only hold the monitor's capabilities (${capabilities.join(', ')}); ${outside.join(', ')} ${outside.length > 1 ? 'are' : 'is'} not among them.`, {
      field: 'patch.default_grant',
    });
  }
}

export function configureMonitor(action: ConfigureAction) {
  return (service: MonitorService, input: unknown, caller: Caller): Reply => {
    const body = validate<{ id: string; reason: string; rule?: string | null; patch?: MonitorPatch }>('monitor-configure', input);
    if (action !== 'update' && body.patch !== undefined) {
      throw invalid(`"patch" belongs to update only; ${action} takes {reason}.`, { field: 'patch' });
    }
    if (action === 'update' && body.patch === undefined) {
      throw invalid('"patch" is required for update: an object with the fields to change.', { field: 'patch' });
    }
    const feed = ownedFeed(service, body.id, caller);
    if (body.patch) checkCapabilityPatch(feed.definition, body.patch);
    if (body.patch?.filter !== undefined || body.patch?.types !== undefined) {
      checkOwnFilter(body.patch.filter ?? feed.definition.filter, body.patch.types ?? feed.definition.types);
    }
    checkCadence(body.patch?.cadence, 'patch.cadence');
    if (body.patch?.rules !== undefined) checkRules(body.patch.rules, () => [...feed.knownTypes(), ...(body.patch?.types ?? [])], 'patch.rules');
    if (body.patch?.source !== undefined && service.sources) body.patch.source = service.sources.check(body.patch.source, caller);
    const now = service.now();
    const event =
      action === 'update'
        ? ({ type: 'UPDATE', patch: body.patch!, now } as const)
        : ({ type: configureEvents[action], now } as MonitorEvent);
    feed.actor.send(event);
    const outcome = feed.actor.getSnapshot().context.outcome!;
    if (!outcome.ok) {
      throw new ProtocolError('UNAVAILABLE', `Monitor "${feed.id}" is retired; retirement is final, so it cannot ${action === 'update' ? 'be updated' : action}.`, {
        live: false,
        status: feed.status,
      });
    }
    let seq: number | null = null;
    if (outcome.changed || action === 'update') {
      seq = service.observations.recordBookkeeping(feed, observationTypes.configured, feed.definition.owner, {
        action,
        reason: body.reason,
        // The rule that made this change, when a client names one (base protocol).
        ...(body.rule != null ? { rule: body.rule } : {}),
        // Subscribers read this observation: a new source URL's credentials stay out of it.
        diff: redactDeep(outcome.diff),
      });
      service.persistMonitor(feed);
    }
    service.sources?.changed(feed);
    return { status: 200, body: () => ({ monitor: servedMonitor(service, feed), seq }) };
  };
}

export interface PublishedObservation extends ProvenanceClaims {
  type: string;
  subject?: string | null;
  data?: Record<string, unknown>;
  tags?: Record<string, string | number | boolean>;
  verified?: ProvenanceClaims['verification'];
  time?: string;
}

export function draftOf(feed: Feed, item: PublishedObservation, index: number | null, now: number): ObservationDraft {
  const at = (field: string) => (index === null ? field : `observations.${index}.${field}`);
  if (serverOnlyTypes.has(item.type)) {
    throw invalid(`"${at('type')}" ${item.type} is written by the server only; producers may publish ${observationTypes.contradiction}, ${observationTypes.contradictionResolved} and their own types.`, {
      field: at('type'),
    });
  }
  if (item.verification !== undefined && item.verified !== undefined && item.verification !== item.verified) {
    throw invalid(`"${at('verification')}" and "${at('verified')}" disagree; send one of them.`, { field: at('verification') });
  }
  const data = item.data ?? {};
  for (const reserved of ['provenance', 'tags'] as const) {
    if (reserved in data) {
      throw invalid(`"${at(`data.${reserved}`)}" is written by the server; send tags in the top-level "tags" field.`, {
        field: at(`data.${reserved}`),
      });
    }
  }
  // `verified` is the older name of `verification`; the item itself is not copied to say so.
  const claims = item.verification === undefined && item.verified !== undefined ? { ...item, verification: item.verified } : item;
  const provenance = resolveProvenance(claims, feed.definition.owner, feed.definition.attested);
  return {
    type: item.type,
    subject: item.subject ?? null,
    time: item.time ?? isoTime(now),
    horizon: feed.definition.horizon,
    provenance,
    data,
    tags: item.tags === undefined ? {} : tagsOf(item.tags),
  };
}

// fromEntries, not assignment: a tag named "__proto__" is a tag like any other.
const tagsOf = (tags: Record<string, unknown>): Record<string, string> => Object.fromEntries(Object.entries(tags).map(([k, v]) => [k, String(v)]));

export function publish(service: MonitorService, input: unknown, caller: Caller): Reply {
  const { id, ...rest } = validate<Record<string, unknown>>('publish-target', input);
  const batch = 'observations' in rest;
  const items = batch
    ? validate<{ observations: PublishedObservation[] }>('publish-batch', rest).observations
    : [validate<PublishedObservation>('observation', rest)];
  const feed = ownedFeed(service, id as string, caller);
  if (feed.status !== 'active') {
    throw new ProtocolError('UNAVAILABLE', `Monitor "${feed.id}" is ${feed.status} and accepts no publications${feed.status === 'paused' ? ' until it is resumed' : ''}.`, {
      live: false,
      status: feed.status,
    });
  }
  const now = service.now();
  // Every item is checked before any is appended: a batch is all or nothing.
  const drafts = items.map((item, i) => draftOf(feed, item, batch ? i : null, now));
  const appended = drafts.map((draft) => service.observations.append(feed, draft, 'producer'));
  if (batch) return { status: 201, body: { seqs: appended.map((a) => a.seq) } };
  // The stored text is the served observation: reply with it rather than serialising it again.
  return { status: 201, body: { observation: new RawJson(appended[0]!.body), seq: appended[0]!.seq } };
}
