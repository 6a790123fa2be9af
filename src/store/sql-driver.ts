// The synchronous SQLite connection the store runs compiled queries on:
// node:sqlite where the running Node has it, better-sqlite3 otherwise.
// Synchronous on purpose: a group commit is one transaction per event-loop
// turn, and nothing else may interleave with it.
import { createRequire } from 'node:module';

export interface SqlStatement {
  run(params: readonly unknown[]): { changes: number | bigint };
  all<T>(params: readonly unknown[]): T[];
  get<T>(params: readonly unknown[]): T | undefined;
}

export interface SqlDriver {
  readonly name: 'better-sqlite3' | 'node:sqlite';
  exec(sql: string): void;
  prepare(sql: string): SqlStatement;
  close(): void;
}

const require = createRequire(import.meta.url);

type Bindable = string | number | bigint | Buffer | null;
const bindable = (params: readonly unknown[]) =>
  params.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p === undefined ? null : p)) as Bindable[];

interface NativeStatement {
  run(...params: Bindable[]): { changes: number | bigint };
  all(...params: Bindable[]): unknown[];
  get(...params: Bindable[]): unknown;
}

/** Both drivers' statements take spread parameters; the store passes arrays. */
function statementOf(stmt: NativeStatement): SqlStatement {
  return {
    run: (params) => stmt.run(...bindable(params)),
    all: <T>(params: readonly unknown[]) => stmt.all(...bindable(params)) as T[],
    get: <T>(params: readonly unknown[]) => stmt.get(...bindable(params)) as T | undefined,
  };
}

function openNodeSqlite(path: string): SqlDriver | undefined {
  let mod: { DatabaseSync: new (path: string) => NodeSqliteDatabase } | undefined;
  try {
    const getBuiltin = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
    mod = getBuiltin?.('node:sqlite') as typeof mod;
  } catch {
    return undefined;
  }
  if (!mod) return undefined;
  const db = new mod.DatabaseSync(path);
  return {
    name: 'node:sqlite',
    exec: (sql) => db.exec(sql),
    prepare: (sql) => statementOf(db.prepare(sql)),
    close: () => db.close(),
  };
}

interface NodeSqliteDatabase {
  exec(sql: string): void;
  prepare(sql: string): NativeStatement;
  close(): void;
}

function openBetterSqlite(path: string): SqlDriver {
  const Database = require('better-sqlite3') as typeof import('better-sqlite3');
  const db = new Database(path);
  return {
    name: 'better-sqlite3',
    exec: (sql) => {
      db.exec(sql);
    },
    prepare: (sql) => statementOf(db.prepare(sql)),
    close: () => db.close(),
  };
}

/** Opens `path` (":memory:" for a database that lives as long as the process). */
export function openSqlDriver(path: string, prefer: 'auto' | 'better-sqlite3' | 'node:sqlite' = 'auto'): SqlDriver {
  if (prefer !== 'better-sqlite3') {
    const native = openNodeSqlite(path);
    if (native) return native;
    if (prefer === 'node:sqlite') throw new Error('node:sqlite is not available in this Node version');
  }
  return openBetterSqlite(path);
}
