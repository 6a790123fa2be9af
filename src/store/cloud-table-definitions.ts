// The cloud API's tables (src/cloud) as the shared definition describes them,
// for PostgreSQL, where every node of a cluster reads the same API keys,
// webhook registrations and deliveries (docs/cloud.md). SQLite's copies are
// made by the cloud store itself; test/store/schema-agreement.test.ts checks
// that both hold the same columns. `cluster_nodes` and `monitor_owners` exist
// only on PostgreSQL: each node's heartbeat, read by /discover, and which node
// runs each monitor's timers and source (src/cluster/ownership.ts).
import type { TableDefinition } from './table-definitions.ts';

const text = (name: string, notNull = true) => ({ name, type: 'text' as const, notNull });
const integer = (name: string, notNull = true) => ({ name, type: 'integer' as const, notNull });

export const cloudTableDefinitions: readonly TableDefinition[] = [
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

/** Tables only a cluster has. */
export const clusterTableDefinitions: readonly TableDefinition[] = [
  {
    name: 'cluster_nodes',
    columns: [{ name: 'id', type: 'text', primaryKey: true, notNull: true }, text('url'), integer('seen_ms')],
  },
  {
    // A lease on the monitor's timers: `token` grows at each takeover and fences off an owner's stale writes.
    name: 'monitor_owners',
    columns: [{ name: 'mkey', type: 'integer', primaryKey: true, notNull: true }, text('node_id'), integer('token'), integer('expires_ms')],
  },
];
