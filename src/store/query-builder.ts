// kysely as a type-checked query compiler. Statements are compiled here once
// and executed synchronously by the SqlDriver inside the group commit: awaited
// kysely execution costs ~20 µs per statement and would hold its connection
// mutex across event-loop turns (runtime-facts.md, style.md §13).
import {
  type CompiledQuery,
  DummyDriver,
  Kysely,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import type { SqlDriver, SqlStatement } from './sql-driver.ts';
import type { Database } from './tables.ts';

export const qb = new Kysely<Database>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
});

/** A compiled query whose parameters are supplied at run time, in the compiled order. */
export class Prepared {
  private readonly statement: SqlStatement;
  constructor(driver: SqlDriver, readonly query: CompiledQuery) {
    this.statement = driver.prepare(query.sql);
  }
  run(params: readonly unknown[] = this.query.parameters): number {
    return Number(this.statement.run(params).changes);
  }
  all<T>(params: readonly unknown[] = this.query.parameters): T[] {
    return this.statement.all<T>(params);
  }
  get<T>(params: readonly unknown[] = this.query.parameters): T | undefined {
    return this.statement.get<T>(params);
  }
}

/** Prepares dynamic queries (filters) once per distinct SQL text. */
export class StatementCache {
  private readonly cache = new Map<string, SqlStatement>();
  constructor(private readonly driver: SqlDriver, private readonly capacity = 256) {}

  statement(sql: string): SqlStatement {
    let stmt = this.cache.get(sql);
    if (stmt) {
      this.cache.delete(sql);
    } else {
      stmt = this.driver.prepare(sql);
      if (this.cache.size >= this.capacity) this.cache.delete(this.cache.keys().next().value as string);
    }
    this.cache.set(sql, stmt);
    return stmt;
  }

  all<T>(query: CompiledQuery): T[] {
    return this.statement(query.sql).all<T>(query.parameters);
  }

  get<T>(query: CompiledQuery): T | undefined {
    return this.statement(query.sql).get<T>(query.parameters);
  }
}
