// Tables of the triggers' state in the project's .vigil/vigil.db, as kysely
// sees them. The daemon, `vigil temporal` and the SDK share this file.

export interface MetaTable {
  key: string;
  value: string;
}

export interface TemporalStateTable {
  name: string;
  /** null: the recipe's `enabled` decides; set by temporal enable/disable. */
  enabled: number | null;
  last_run: string | null;
  next_run: string | null;
  last_end_ms: number | null;
  consecutive_failures: number;
  circuit_broken: number;
  broken_at_ms: number | null;
}

export interface FiringTable {
  run_id: string;
  trigger: string;
  recipe: string;
  due_ms: number;
  status: string;
  pid: number | null;
  started_ms: number;
  ended_ms: number | null;
  reason: string | null;
}

export interface SentinelSubscriptionTable {
  recipe: string;
  kind: string;
  base: string;
  monitor: string;
  subscription: string;
  /** Empty in the file: the token is kept under the Vigil home (sentinel/subscription-tokens.ts). */
  token: string;
}

export interface ReactionTable {
  recipe: string;
  /**
   * The watch subscription the observation came through: a seq names an observation only on its
   * monitor as that server holds it (a server restarted without its state numbers from 1 again).
   * Null in rows written before it was kept (those are never matched).
   */
  subscription: string | null;
  seq: number;
  subject: string;
  run_id: string;
  status: string;
}

export interface TriggerDatabase {
  meta: MetaTable;
  temporal_state: TemporalStateTable;
  firings: FiringTable;
  sentinel_subscriptions: SentinelSubscriptionTable;
  reactions: ReactionTable;
}

export const triggerSchemaSql = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS temporal_state (
  name TEXT PRIMARY KEY, enabled INTEGER, last_run TEXT, next_run TEXT, last_end_ms INTEGER,
  consecutive_failures INTEGER NOT NULL DEFAULT 0, circuit_broken INTEGER NOT NULL DEFAULT 0, broken_at_ms INTEGER);
CREATE TABLE IF NOT EXISTS firings (
  run_id TEXT PRIMARY KEY, trigger TEXT NOT NULL, recipe TEXT NOT NULL, due_ms INTEGER NOT NULL, status TEXT NOT NULL,
  pid INTEGER, started_ms INTEGER NOT NULL, ended_ms INTEGER, reason TEXT);
CREATE INDEX IF NOT EXISTS firings_recipe ON firings (recipe, started_ms);
CREATE TABLE IF NOT EXISTS sentinel_subscriptions (
  recipe TEXT NOT NULL, kind TEXT NOT NULL, base TEXT NOT NULL, monitor TEXT NOT NULL, subscription TEXT NOT NULL,
  token TEXT NOT NULL, PRIMARY KEY (recipe, kind));
CREATE TABLE IF NOT EXISTS reactions (
  recipe TEXT NOT NULL, seq INTEGER NOT NULL, subject TEXT NOT NULL, run_id TEXT NOT NULL, status TEXT NOT NULL,
  subscription TEXT, PRIMARY KEY (recipe, seq));
`;

/** Columns added since a table was first made: added to a file made before them. */
export const addedColumns: ReadonlyArray<{ table: string; column: string; definition: string }> = [{ table: 'reactions', column: 'subscription', definition: 'TEXT' }];
