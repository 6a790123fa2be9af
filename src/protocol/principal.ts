// Principals are strings such as "human:ana" or "agent:builder"; the prefix
// before ":" names the kind, which drives the provenance ladder.
import type { Origin } from './vocabulary.ts';

const kindByPrefix: Record<string, Origin> = {
  human: 'human',
  user: 'human',
  agent: 'agent',
  probe: 'probe',
  webhook: 'webhook',
  hook: 'webhook',
  system: 'system',
};

export function principalKind(principal: string): Origin {
  const colon = principal.indexOf(':');
  if (colon <= 0) return 'agent';
  return kindByPrefix[principal.slice(0, colon).toLowerCase()] ?? 'agent';
}

export const serverPrincipal = 'system:vigil';
