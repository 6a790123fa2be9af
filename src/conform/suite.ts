// The whole conformance suite, in protocol.md section order, each check
// marked with what it rests on (basis.ts).
import { checkBasis } from './basis.ts';
import type { Check, SuiteCheck } from './check.ts';
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

const checks: readonly Check[] = [
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
for (const c of checks) {
  if (ids.has(c.id)) throw new Error(`duplicate conformance check id ${c.id}`);
  if (!Object.hasOwn(checkBasis, c.id)) throw new Error(`conformance check ${c.id} has no basis in src/conform/basis.ts (spec or vigil)`);
  ids.add(c.id);
}
for (const id of Object.keys(checkBasis)) if (!ids.has(id)) throw new Error(`src/conform/basis.ts names ${id}, which is no conformance check`);

export const conformanceChecks: readonly SuiteCheck[] = checks.map((c) => ({ ...c, basis: checkBasis[c.id]!.basis }));

/** The checks the base specification requires, for measuring another implementation fairly. */
export const specChecks: readonly SuiteCheck[] = conformanceChecks.filter((c) => c.basis === 'spec');
