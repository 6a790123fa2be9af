// The provenance ladder (§5): who may claim which origin, tier and
// verification, and the defaults that never reach the top of a ladder.
import { ProtocolError } from './errors.ts';
import type { Provenance } from './observation.ts';
import { principalKind } from './principal.ts';
import type { Origin, Tier, Verification } from './vocabulary.ts';

export interface ProvenanceClaims {
  tier?: Tier;
  origin?: Origin;
  verification?: Verification;
  actor?: string;
  on_behalf_of?: string;
  source_ref?: string;
  wasDerivedFrom?: Array<{ source: string; id: string }>;
  supersedes?: { source: string; id: string };
}

const defaultTier: Record<Origin, Tier> = {
  human: 'measured',
  probe: 'measured',
  webhook: 'measured',
  system: 'measured',
  agent: 'unverified',
};

const defaultVerification: Record<Origin, Verification> = {
  human: 'reported',
  probe: 'machine_verified',
  webhook: 'machine_verified',
  system: 'machine_verified',
  agent: 'unverified',
};

const ceiling = (message: string) => new ProtocolError('PROVENANCE_CEILING', message);

/** Applies the refusal rules in the protocol's order (vocabulary is checked before, by the schema). */
export function resolveProvenance(claims: ProvenanceClaims, owner: string, attested: boolean): Provenance {
  const onBehalfOf = claims.on_behalf_of ?? null;
  if (onBehalfOf !== null && onBehalfOf !== owner) {
    throw ceiling(`"on_behalf_of" may only name this monitor's owner (${owner}); got "${onBehalfOf}".`);
  }
  const actor = claims.actor ?? owner;
  const actorKind = principalKind(actor);
  // A token holds its owner's name only: a client may not act as a person it is not.
  if (actorKind === 'human' && actor !== owner) {
    throw ceiling(
      `The actor "${actor}" names a person who is not this monitor's owner (${owner}); a token acts under its owner's name only. Name the client instead (e.g. "agent:my-tool")${principalKind(owner) === 'human' ? `, with "on_behalf_of": "${owner}"` : ''}.`,
    );
  }
  const origin = claims.origin ?? actorKind;
  if (claims.tier === 'src' && origin !== 'human') {
    throw new ProtocolError(
      'TIER_NOT_ASSERTABLE',
      `Only a human origin may assert tier "src"; this observation's origin is "${origin}". Use "measured" or "derived", or publish on behalf of the human owner.`,
    );
  }
  const elevated =
    origin === 'human' ||
    claims.tier === 'src' ||
    claims.verification === 'human_verified' ||
    claims.verification === 'certified';
  if (elevated && principalKind(owner) !== 'human') {
    throw ceiling(
      `This monitor's owner (${owner}) is not a person, so its observations cannot claim origin "human", tier "src" or verification "human_verified"/"certified".`,
    );
  }
  if (origin === 'human' && actorKind !== 'human' && onBehalfOf === null) {
    throw ceiling(
      `The actor "${actor}" is not a person; to claim origin "human" it must publish on behalf of the owner ("on_behalf_of": "${owner}").`,
    );
  }
  return {
    origin,
    tier: claims.tier ?? defaultTier[origin],
    verification: claims.verification ?? defaultVerification[origin],
    actor,
    on_behalf_of: onBehalfOf,
    attested,
    source_ref: claims.source_ref ?? null,
    wasDerivedFrom: claims.wasDerivedFrom ?? [],
    wasAttributedTo: onBehalfOf ?? actor,
    supersedes: claims.supersedes ?? null,
  };
}

/** Provenance of what the server itself records (bookkeeping). */
export function serverProvenance(actor: string, attested: boolean): Provenance {
  return {
    origin: 'system',
    tier: 'measured',
    verification: 'machine_verified',
    actor,
    on_behalf_of: null,
    attested,
    source_ref: null,
    wasDerivedFrom: [],
    wasAttributedTo: actor,
    supersedes: null,
  };
}
