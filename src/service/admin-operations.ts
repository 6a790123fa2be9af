// Administration (§13): a snapshot of the server, and compaction of feeds.
import { validate } from '../protocol/validate.ts';
import { notFound } from '../protocol/errors.ts';
import { type Caller, requireAdmin } from './access.ts';
import type { Feed } from './feed.ts';
import { redactCredentials } from '../net/redact.ts';
import type { Reply } from './reply.ts';
import type { MonitorService } from './service.ts';

export function snapshot(service: MonitorService, _input: unknown, caller: Caller): Reply {
  requireAdmin(service, caller);
  let observations = 0;
  let monitors = 0;
  let liveSubscriptions = 0;
  for (const feed of service.allFeeds()) {
    monitors++;
    observations += feed.stats.head - Math.max(0, feed.stats.retention_floor - 1);
    liveSubscriptions += feed.liveSubscriptions;
  }
  const memory = process.memoryUsage();
  return {
    status: 200,
    body: {
      monitors,
      observations,
      subscriptions_active: liveSubscriptions,
      resident_actors: {
        monitors: service.system.monitors.size,
        subscriptions: service.system.subscriptions.size,
        leases: service.system.leases.size,
      },
      pending_deadlines: service.system.deadlines.size,
      client_limits: { ...service.clientLimits.settings, refusals_counted_not_stored: service.clientLimits.refusalsCounted },
      store: service.cluster
        ? {
            kind: 'postgres',
            url: redactCredentials(service.cluster.storeUrl),
            node: service.cluster.node.id,
            timer_monitors: service.cluster.timerMonitors,
            contention: service.cluster.contention,
          }
        : { kind: 'sqlite', path: redactCredentials(service.store.path) },
      health: { ok: !service.store.commits.failed, uptime_s: Math.round(process.uptime()) },
      memory: { rss_bytes: memory.rss, heap_used_bytes: memory.heapUsed },
    },
  };
}

export function compact(service: MonitorService, input: unknown, caller: Caller): Reply {
  requireAdmin(service, caller);
  const body = validate<{ monitor?: string; upto_seq: number }>('compact', input);
  const targets: Feed[] = [];
  if (body.monitor !== undefined) {
    const feed = service.feed(body.monitor);
    if (!feed) throw notFound(`No monitor "${body.monitor}".`);
    targets.push(feed);
  } else targets.push(...service.allFeeds());
  let compacted = 0;
  const floors: Record<string, number> = {};
  for (const feed of targets) {
    const upto = Math.min(body.upto_seq, feed.committedHead);
    const previousFloor = feed.stats.retention_floor;
    if (upto + 1 > previousFloor) {
      compacted += upto - Math.max(0, previousFloor - 1);
      service.store.compact(feed.key, upto);
      feed.stats.retention_floor = upto + 1;
      service.persistMonitor(feed);
    }
    floors[feed.id] = feed.stats.retention_floor;
  }
  return {
    status: 200,
    body: { compacted, retention_floor: body.monitor !== undefined ? floors[body.monitor] : floors },
  };
}
