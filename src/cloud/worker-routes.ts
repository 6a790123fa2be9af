// The /v1/workers routes of the managed edge (seed: WorkerInfo,
// WorkerDeployResult; secrets are listed by name only).
import { cloudRoute, type CloudRoute } from './cloud-routes.ts';
import type { ManagedEdge } from './edge/managed-edge.ts';

export function workerRoutes(edge: ManagedEdge): CloudRoute[] {
  return [
    cloudRoute('GET', 'workers', 'key', async (c) => ({ status: 200, body: await edge.list(c.key) })),
    cloudRoute('PUT', 'workers/:name', 'key', async (c) => ({
      status: 200,
      body: await edge.deploy(c.key, c.params.name!, c.body()),
    })),
    cloudRoute('POST', 'workers/:name/scheduled', 'key', async (c) => ({
      status: 200,
      body: await edge.runScheduled(c.key, c.params.name!, c.body().cron),
    })),
    cloudRoute('GET', 'workers/:name', 'key', async (c) => ({ status: 200, body: await edge.status(c.key, c.params.name!) })),
    cloudRoute('DELETE', 'workers/:name', 'key', async (c) => ({ status: 200, body: await edge.delete(c.key, c.params.name!) })),
    cloudRoute('GET', 'workers/:name/secrets', 'key', async (c) => ({ status: 200, body: await edge.secretNames(c.key, c.params.name!) })),
    cloudRoute('PUT', 'workers/:name/secrets/:key', 'key', async (c) => {
      await edge.setSecret(c.key, c.params.name!, c.params.key, c.body().value);
      return { status: 200, body: {} };
    }),
    cloudRoute('DELETE', 'workers/:name/secrets/:key', 'key', async (c) => {
      await edge.deleteSecret(c.key, c.params.name!, c.params.key!);
      return { status: 200, body: {} };
    }),
  ];
}
