// The cloud API's tables (src/cloud) as the shared definition describes them,
// for PostgreSQL, where every node of a cluster reads the same API keys,
// webhook registrations, deliveries and managed-edge workers (docs/cloud.md).
// SQLite's copies are made by the cloud store itself;
// test/store/schema-agreement.test.ts checks that both hold the same columns.
// `cluster_nodes` exists only on PostgreSQL: each node's heartbeat, read by
// /discover; so do `monitor_owners`, which node runs each monitor's timers
// and source (src/cluster/ownership.ts), and `cloud_cron_runs`, the claims of
// workers' cron runs.
// Each migration creates the tables of its own list below, so a table added
// later is made once, by its own migration, on a new database as on an old one.
import type { TableDefinition } from './table-definitions.ts';

const text = (name: string, notNull = true) => ({ name, type: 'text' as const, notNull });
const integer = (name: string, notNull = true) => ({ name, type: 'integer' as const, notNull });

/** Made by migration 0002_cloud_and_nodes. */
export const cloudTablesOf0002: readonly TableDefinition[] = [
  {
    name: 'cloud_api_keys',
    columns: [{ name: 'id', type: 'text', primaryKey: true, notNull: true }, text('name'), { ...text('hash'), unique: true }, text('created_at'), text('revoked_at', false), text('monitors')],
  },
  {
    name: 'cloud_webhooks',
    columns: [{ name: 'id', type: 'text', primaryKey: true, notNull: true }, text('key_id'), text('event'), text('url'), text('secret'), integer('active'), text('created_at'), text('filter', false)],
    indexes: [{ name: 'cloud_webhooks_by_event', columns: ['key_id', 'event'] }],
  },
  {
    name: 'cloud_deliveries',
    columns: [
      { name: 'id', type: 'text', primaryKey: true, notNull: true },
      text('webhook_id'),
      text('event'),
      text('payload'),
      text('body_id', false),
      text('status'),
      integer('attempts'),
      integer('next_attempt_ms', false),
      integer('response_code', false),
      text('error', false),
      text('created_at'),
      text('updated_at'),
    ],
    indexes: [
      { name: 'cloud_deliveries_by_webhook', columns: ['webhook_id', 'created_at'] },
      { name: 'cloud_deliveries_by_status', columns: ['status', 'updated_at'] },
      { name: 'cloud_deliveries_by_body', columns: ['body_id'] },
    ],
  },
  {
    name: 'cloud_event_bodies',
    columns: [{ name: 'id', type: 'text', primaryKey: true, notNull: true }, text('key_id'), text('body'), integer('bytes'), text('created_at')],
  },
];

/** Made by migration 0004_workers. */
export const workerTables: readonly TableDefinition[] = [
  {
    name: 'cloud_workers',
    columns: [
      { name: 'name', type: 'text', primaryKey: true, notNull: true },
      text('id'),
      text('key_id'),
      text('script'),
      text('secrets'),
      text('crons'),
      text('created_on'),
      text('modified_on'),
      text('version'),
    ],
  },
];

export const cloudTableDefinitions: readonly TableDefinition[] = [...cloudTablesOf0002, ...workerTables];

/** Tables only a cluster has, made by 0002_cloud_and_nodes. */
export const clusterTablesOf0002: readonly TableDefinition[] = [
  {
    name: 'cluster_nodes',
    columns: [{ name: 'id', type: 'text', primaryKey: true, notNull: true }, text('url'), integer('seen_ms')],
  },
];

/** Made by 0003_monitor_owners. */
export const monitorOwnerTables: readonly TableDefinition[] = [
  {
    // A lease on the monitor's timers: `token` grows at each takeover and fences off an owner's stale writes.
    name: 'monitor_owners',
    columns: [{ name: 'mkey', type: 'integer', primaryKey: true, notNull: true }, text('node_id'), integer('token'), integer('expires_ms')],
  },
];

/** Made by 0004_workers: one row per cron run of a worker that a node took, so that it runs once. */
export const workerClusterTables: readonly TableDefinition[] = [
  {
    name: 'cloud_cron_runs',
    columns: [text('worker'), text('cron'), integer('due_ms')],
    primaryKey: { name: 'cloud_cron_runs_pk', columns: ['worker', 'cron', 'due_ms'] },
    indexes: [{ name: 'cloud_cron_runs_by_due', columns: ['due_ms'] }],
  },
];

/** Tables only a cluster has. */
export const clusterTableDefinitions: readonly TableDefinition[] = [...clusterTablesOf0002, ...monitorOwnerTables, ...workerClusterTables];
