// The whole conformance suite, in protocol.md section order.
import type { Check } from './check.ts';
import { adminChecks } from './checks/admin.ts';
import { configureChecks } from './checks/configure.ts';
import { discoverAndErrorChecks } from './checks/discover-errors.ts';
import { filterChecks } from './checks/filters.ts';
import { leaseChecks } from './checks/leases.ts';
import { monitorChecks } from './checks/monitors.ts';
import { provenanceChecks } from './checks/provenance.ts';
import { publishChecks } from './checks/publish.ts';
import { replyDetailChecks } from './checks/reply-details.ts';
import { rpcChecks } from './checks/rpc.ts';
import { sseChecks } from './checks/sse.ts';
import { stateChecks } from './checks/state.ts';
import { subscriptionChecks } from './checks/subscriptions.ts';

export const conformanceChecks: readonly Check[] = [
  ...discoverAndErrorChecks,
  ...monitorChecks,
  ...configureChecks,
  ...publishChecks,
  ...provenanceChecks,
  ...stateChecks,
  ...filterChecks,
  ...subscriptionChecks,
  ...adminChecks,
  ...sseChecks,
  ...leaseChecks,
  ...rpcChecks,
  ...replyDetailChecks,
];

const ids = new Set<string>();
for (const c of conformanceChecks) {
  if (ids.has(c.id)) throw new Error(`duplicate conformance check id ${c.id}`);
  ids.add(c.id);
}
