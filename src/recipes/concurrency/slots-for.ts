// The slots a runner keeps its caps with: leases on the server of vigil.yml
// when there is one (every runner of every machine that uses that server),
// else lock files under the user's Vigil home (the runners of this machine).
import type { WorkspaceConfig } from '../../workspace/workspace-config.ts';
import { AgentSlots } from './agent-slots.ts';
import { DEFAULT_SLOT_LEASE_SECONDS } from '../../workspace/concurrency-caps.ts';
import { LocalSlots } from './local-slots.ts';
import { ServerSlots } from './server-slots.ts';

export function agentSlotsFor(config: WorkspaceConfig, env: NodeJS.ProcessEnv, warn: (line: string) => void): AgentSlots | null {
  const caps = config.concurrency;
  if (!caps || Object.keys(caps).length === 0) return null;
  const store = config.server ? new ServerSlots(config.server, config.concurrency_lease_seconds ?? DEFAULT_SLOT_LEASE_SECONDS, warn, env) : new LocalSlots(env);
  return new AgentSlots(store, caps);
}
