// The admin's /v1 routes over every key's belongings (issue 42): revoking a
// key also deletes its workers (rows, crons, runtimes) and disables its
// webhook registrations, `monitor.observation` followers among them, so
// nothing of a revoked key keeps answering, firing or receiving; and the
// admin lists and deletes any key's workers and registrations.
import { revokeApiKey } from './api-keys.ts';
import type { CloudRows } from './cloud-rows.ts';
import { cloudRoute, type CloudRoute } from './cloud-routes.ts';
import type { ManagedEdge } from './edge/managed-edge.ts';
import type { Webhooks } from './webhooks.ts';

export interface Revoked {
  revoked: true;
  /** The key's workers, deleted. */
  workers_deleted: string[];
  /** How many of its registrations were disabled. */
  webhooks_disabled: number;
}

/** Revokes the key, then removes what it left: also when it was revoked before (a cleanup that failed half way is finished). */
export async function revokeKey(store: CloudRows, edge: ManagedEdge, webhooks: Webhooks, id: string): Promise<Revoked> {
  await revokeApiKey(store, id);
  await store.settled();
  const workers = await edge.removeAllOf(id);
  const disabled = await webhooks.disableAllOf(id);
  await store.settled();
  return { revoked: true, workers_deleted: workers, webhooks_disabled: disabled };
}

export function adminRoutes(store: CloudRows, edge: ManagedEdge, webhooks: Webhooks): CloudRoute[] {
  const ok = (body: unknown) => ({ status: 200, body });
  return [
    cloudRoute('DELETE', 'api-keys/:id', 'admin', async (c) => ok(await revokeKey(store, edge, webhooks, c.params.id!))),
    cloudRoute('GET', 'admin/workers', 'admin', async () => ok({ workers: await edge.listAll() })),
    cloudRoute('DELETE', 'admin/workers/:name', 'admin', async (c) => ok(await edge.deleteAny(c.params.name!))),
    cloudRoute('GET', 'admin/webhooks', 'admin', async () => ok({ webhooks: await webhooks.listAll() })),
    cloudRoute('DELETE', 'admin/webhooks/:id', 'admin', async (c) => {
      const deleted = await webhooks.deleteAny(c.params.id!);
      await store.settled();
      return ok(deleted);
    }),
  ];
}
