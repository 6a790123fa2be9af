// The closed vocabularies of the monitor protocol. A value outside its list
// is refused with UNKNOWN_VOCABULARY and never stored.

export const vocabularies = {
  tier: ['src', 'measured', 'derived', 'unverified', 'falsified'],
  origin: ['human', 'agent', 'webhook', 'probe', 'system'],
  verified: ['human_verified', 'machine_verified', 'certified', 'reported', 'unverified'],
  horizon: ['event', 'minute', 'hour', 'day', 'week', 'month'],
  capabilities: ['observe', 'react', 'act'],
  visibility: ['private', 'shared', 'public'],
  'source.kind': ['shell', 'ws', 'http', 'file', 'feed', 'cir', 'formula', 'log'],
  reset_policy: ['earliest', 'latest', 'none'],
  protocol: ['pull', 'http', 'mcp'],
  gaps: [
    'independence_unknown',
    'single_actor',
    'stale_source',
    'no_subscribers',
    'no_event_provenance',
    'unattested_origin',
  ],
} as const;

export type VocabularyName = keyof typeof vocabularies;
export type Tier = (typeof vocabularies.tier)[number];
export type Origin = (typeof vocabularies.origin)[number];
export type Verification = (typeof vocabularies.verified)[number];
export type Horizon = (typeof vocabularies.horizon)[number];
export type Capability = (typeof vocabularies.capabilities)[number];
export type Visibility = (typeof vocabularies.visibility)[number];
export type SourceKind = (typeof vocabularies)['source.kind'][number];
export type ResetPolicy = (typeof vocabularies.reset_policy)[number];
export type FeedProtocol = (typeof vocabularies.protocol)[number];
export type Gap = (typeof vocabularies.gaps)[number];

export function inVocabulary(name: VocabularyName, value: unknown): boolean {
  return typeof value === 'string' && (vocabularies[name] as readonly string[]).includes(value);
}

/** This server's vendor segment: its bookkeeping types are <vendor>.monitor.*. */
export const vendor = 'ai.vigil';

const prefix = `${vendor}.monitor.`;

/** Observation types the protocol itself defines. */
export const observationTypes = {
  configured: `${prefix}configured`,
  subscribed: `${prefix}subscribed`,
  subscriptionRetired: `${prefix}subscription_retired`,
  lease: `${prefix}lease`,
  rejected: `${prefix}rejected`,
  contradiction: `${prefix}contradiction`,
  contradictionResolved: `${prefix}contradiction_resolved`,
  state: `${prefix}state`,
  bookmark: `${prefix}bookmark`,
} as const;

export const protocolTypes: readonly string[] = Object.values(observationTypes);

/** Types only the server writes; a producer may not publish them. */
export const serverOnlyTypes: ReadonlySet<string> = new Set([
  observationTypes.configured,
  observationTypes.subscribed,
  observationTypes.subscriptionRetired,
  observationTypes.lease,
  observationTypes.rejected,
  observationTypes.state,
  observationTypes.bookmark,
]);

export const protocolVersion = '0.1';
export const extensionName = 'ai.vigil/monitors';

/** Lease extensions of protocol.md §21 this server serves, as `/discover` lists them. */
export const leaseExtensions = ['leases.fence', 'leases.next', 'leases.batch'] as const;
