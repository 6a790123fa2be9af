// The managed edge's limits as `vigil serve --edge-limits name=value,...`
// gives them (docs/cloud.md): requests in progress per worker and per client
// (edge-admission.ts), runtimes running per key and per server, how long an
// idle one keeps running, and the memory of all of them (runtime-bounds.ts).
import { defaultEdgeRequestCaps, type EdgeRequestCaps } from './edge-admission.ts';
import { defaultRuntimeCaps, type RuntimeCaps } from './runtime-bounds.ts';

export const defaultEdgeLimits = {
  requests_per_worker: defaultEdgeRequestCaps.perWorker,
  requests_per_client: defaultEdgeRequestCaps.perClient,
  running_per_key: defaultRuntimeCaps.perKey,
  running_per_server: defaultRuntimeCaps.perServer,
  idle_seconds: defaultRuntimeCaps.idleMs / 1000,
  memory_mb: defaultRuntimeCaps.memoryBytes / (1 << 20),
} as const;

export type EdgeLimitSettings = { -readonly [K in keyof typeof defaultEdgeLimits]: number };

export function edgeCaps(given: Partial<EdgeLimitSettings> = {}): { requests: EdgeRequestCaps; runtimes: RuntimeCaps } {
  const limits = { ...defaultEdgeLimits, ...given };
  return {
    requests: { perWorker: limits.requests_per_worker, perClient: limits.requests_per_client },
    runtimes: {
      perKey: limits.running_per_key,
      perServer: Math.max(limits.running_per_server, 1),
      idleMs: limits.idle_seconds * 1000,
      memoryBytes: limits.memory_mb * (1 << 20),
    },
  };
}
